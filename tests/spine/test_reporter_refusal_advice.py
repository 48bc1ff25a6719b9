"""A reporter that would write nothing for an experiment is refused; the line advised
'set a gate.*' even to a reporter that does not write gate results (setting one was then
refused again)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from skilleval.errors import UserError
from skilleval.reporting.applies import check_reporters


def test_gate_advice_only_for_a_reporter_that_writes_gate_results() -> None:
    experiment = SimpleNamespace(reports=("trigger_opt",), gate_metrics=("accuracy",))
    csv_only = SimpleNamespace(kinds=("trigger_eval",))
    with pytest.raises(UserError) as no_gates:
        check_reporters({"walkp_csv": csv_only}, experiment, "trigger_opt", gates_active=False)
    assert "gate" not in str(no_gates.value), str(no_gates.value)
    with_gates = SimpleNamespace(kinds=("trigger_eval", "gates"))
    with pytest.raises(UserError) as gates:
        check_reporters({"junit": with_gates}, experiment, "trigger_opt", gates_active=False)
    assert "set a gate.*" in str(gates.value)
    check_reporters({"junit": with_gates}, experiment, "trigger_opt", gates_active=True)  # accepted
