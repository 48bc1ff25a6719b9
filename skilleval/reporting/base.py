"""The reporter protocol: one method, called once per result object at the end of a job."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from skilleval.app import JobContext


class Reporter(Protocol):
    def report(self, job: "JobContext", kind: str, payload: Any) -> None:
        """Write or show `payload`; `kind` names the experiment that produced it
        (``trigger_eval`` with a TriggerEvalReport, ``functional_eval`` with the benchmark
        dict, ...) or is ``gates`` (a list of ``skilleval.gates.GateResult``, after the
        experiment, when gates are set). Ignore kinds you do not know."""
