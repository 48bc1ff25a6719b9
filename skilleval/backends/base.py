"""The backend protocol, and a base class with the defaults most backends share.

A backend is what a model looks like to skilleval. It has one job per method:

* ``run_trial(trial) -> TrialResult``: does the target skill fire for this query, given this
  listing? Errors and timeouts come back as outcomes, never as exceptions and never as
  ``NOT_TRIGGERED``.
* ``complete(prompt, system=...) -> Completion``: plain text completion, used by proposers,
  judges, comparators and analyzers.
* ``execute(request) -> ExecutionResult``: run a functional task in a sandbox folder
  (see ``skilleval.functional``). Optional: the default says the backend cannot. It must
  collect what the task wrote: ``before = snapshot(request.sandbox)`` (``skilleval.execution``)
  before running, then ``outputs=collect_outputs(request.sandbox, before)`` in the result;
  files not listed there are not stored, so a cached run restores none of them.
* ``check_task(name, prompt, input_files)``: optional; raise ``UserError`` before any call
  when this backend cannot do a functional task at all (the offline stub simulates only
  some kinds of work, and says so rather than inventing another skill's output).
* ``identity()``: what goes into a trial's content-addressed key (backend, resolved model,
  sampling parameters, harness version). Two backends that would answer a trial the same
  way must return the same identity; anything that changes answers must change it. A
  subclass of `BaseBackend` with parameters or a version of its own must add them
  (``{**super().identity(), "temperature": self.params.temperature}``): the base identity
  holds only name, model and harness version, and it keys the cache, so a change it does not
  show is answered from the store with the old results.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from skilleval.domain import Completion, Trial, TrialResult
from skilleval.errors import UserError

if TYPE_CHECKING:
    from skilleval.execution import ExecutionRequest, ExecutionResult


@runtime_checkable
class Backend(Protocol):
    name: str
    model: str
    #: Real backends spend money: the harness self-check runs before them.
    needs_self_check: bool

    def identity(self) -> dict[str, Any]: ...

    async def run_trial(self, trial: Trial) -> TrialResult: ...

    async def complete(self, prompt: str, *, system: str | None = None,
                       max_tokens: int = 2048) -> Completion: ...

    async def execute(self, request: "ExecutionRequest") -> "ExecutionResult": ...

    def estimate_cost_usd(self, input_tokens: int, output_tokens: int) -> float | None: ...

    def use_store(self, root: Path) -> None: ...

    async def aclose(self) -> None: ...


class BaseBackend:
    """Defaults shared by the built-in backends; third-party backends may subclass it."""

    name = "base"
    model = "unknown"
    needs_self_check = False
    harness_version = "1"

    def identity(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "harness": self.harness_version}

    async def complete(self, prompt: str, *, system: str | None = None,
                       max_tokens: int = 2048) -> Completion:
        raise UserError(f"backend {self.name!r} cannot complete text")

    async def execute(self, request: "ExecutionRequest") -> "ExecutionResult":
        raise UserError(f"backend {self.name!r} cannot execute functional tasks")

    def check_task(self, name: str, prompt: str, input_files: tuple[str, ...]) -> None:
        """Raise UserError when this backend cannot do the task at all. Default: it can."""
        return None

    def estimate_cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        return None

    def worst_cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        """The most a call of this size could cost (all input at the dearest cache-write
        rate), which `budget.max_usd` books for each call in flight; None: unknown."""
        return None

    def use_store(self, root: Path) -> None:
        """Told once per job where the store is, for state that must survive a crash (the API
        backend keeps its Message Batch ids there). Default: nothing to keep."""
        return None

    async def aclose(self) -> None:
        return None
