"""Issue 8 item 3: early stopping biases rates, so `trigger_eval` reports unbiased rates by
default, `decided` output says its rates are early-stopped (and why a query got fewer runs),
and trigger_opt keeps `decided` for selection but reports its held-out test with `fixed`."""
from __future__ import annotations

import json
import sys

import pytest

from skilleval.store.catalog import Store
from skilleval.trigger.policies import TriggerSettings, rates_unbiased
from trust_helpers import EXAMPLES, REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from policy_bias import expected_rate  # noqa: E402  (the benchmark's exact enumeration)


def test_the_stopped_rate_is_biased_and_fixed_is_not() -> None:
    assert expected_rate(0.3, "decided", 3, True) == pytest.approx(0.272, abs=5e-4)
    for p in (0.2, 0.3, 0.7):
        assert expected_rate(p, "fixed", 3, True) == pytest.approx(p)
        assert expected_rate(p, "decided", 5, False) != pytest.approx(p, abs=1e-3)
    assert rates_unbiased(TriggerSettings(policy="fixed"))
    assert not rates_unbiased(TriggerSettings(policy="decided"))
    assert not rates_unbiased(TriggerSettings(policy="sequential"))


def _results(cli) -> dict:  # noqa: ANN001
    return json.loads(cli.results()[-1].read_text())


def test_trigger_eval_defaults_to_unbiased_rates(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", "progress=false", f"skill={EXAMPLES / 'csv-tidy'}",
                          "trigger.runs=5", check=0)
    res = _results(skilleval_cli)
    assert res["settings"]["policy"] == "fixed"
    assert res["rates"].startswith("unbiased")
    assert all(q["runs"] == 5 and not q["early_stopped"] for q in res["results"])
    assert "early-stopped" not in r.stdout


def test_decided_rates_are_labelled_and_short_queries_explained(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", "progress=false", f"skill={EXAMPLES / 'csv-tidy'}",
                          "trigger.runs=5", "trigger.policy=decided", check=0)
    res = _results(skilleval_cli)
    assert res["rates"].startswith("early-stopped") and res["metrics"]["rates"] == res["rates"]
    short = [q for q in res["results"] if q["attempts"] < 5]
    assert short and all(q["early_stopped"] for q in short)
    assert f"{len(short)} of {len(res['results'])} queries stopped before 5 runs once their " \
           "verdict was settled" in " ".join(r.stdout.split())
    assert "(settled)" in r.stdout and "runs*" in r.stdout
    rows = Store(skilleval_cli.store).query(
        "select distinct policy, planned_runs from queries").to_pylist()
    assert rows == [{"policy": "decided", "planned_runs": 5}]


def test_trigger_opt_selects_with_decided_and_tests_with_fixed(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_opt", "progress=false", "proposer=stub",
                          "optimize.max_iterations=1", check=0)
    res = _results(skilleval_cli)
    assert res["rates"]["selection"].startswith("early-stopped (decided")
    assert res["rates"]["test"].startswith("unbiased")
    for label in ("original", "best"):
        assert all(q["runs"] == 3 for q in res["test"][label]["results"]), label
    assert any(q["runs"] < 3 for e in res["history"] for q in e["train_results"]), \
        "selection keeps decided's savings"
    assert "decided for selection, fixed for the test" in " ".join(r.stderr.split())
