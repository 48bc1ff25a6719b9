"""A negative budget is a typo, not a cap: exit 2 naming the key, before any call (it used
to run, stop at once with exit 4 and say "budget.max_calls=-5 reached"). A zero budget is a
real cap: exit 4, without claiming that trials "errored" when none was run."""
from __future__ import annotations

import pytest
from shared_helpers import one_line_error


@pytest.mark.parametrize("arg, key", [("budget.max_calls=-5", "budget.max_calls"),
                                      ("budget.max_usd=-1", "budget.max_usd")])
def test_negative_budget_is_bad_input(skilleval_cli, arg: str, key: str) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", arg)
    assert key in one_line_error(r, 2)
    assert not (skilleval_cli.store / "trials").exists()


def test_zero_budget_stops_without_blaming_the_backend(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", "budget.max_calls=0")
    assert r.returncode == 4, r.stderr
    assert "budget stop" in r.stderr
    assert "errored" not in r.stderr and "check the backend" not in r.stderr, r.stderr
