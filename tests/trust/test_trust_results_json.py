"""Issue 8 item 2: both results.json files read the same under skill-creator's formulas
(`trigger_rate = triggers / runs`, per-run precision/recall/accuracy) as the numbers we print."""
from __future__ import annotations

import json

import pytest

from trust_helpers import EXAMPLES, skill_creator_pass, skill_creator_run_metrics


def _run(cli, *args: str) -> dict:  # noqa: ANN001
    cli.run(*args, "progress=false", "backend.error_rate=0.3", "backend.timeout_rate=0.05",
                   "backend.max_retries=0", "trigger.max_error_rate=0.9", check=0)
    [path] = cli.results()
    return json.loads(path.read_text())


def _check_rows(rows: list[dict]) -> None:
    for r in rows:
        assert {"errors", "timeouts"} <= set(r), "errors and timeouts need fields of their own"
        if r["runs"]:  # (an insufficient query's pass is null: no verdict)
            assert r["trigger_rate"] == pytest.approx(r["triggers"] / r["runs"], abs=1e-4), r
            assert r["pass"] == (None if r.get("insufficient") else skill_creator_pass(r)), r


def test_trigger_eval_results_json_recomputes_to_our_numbers(skilleval_cli) -> None:  # noqa: ANN001
    res = _run(skilleval_cli, "+experiment=trigger_eval", "trigger.policy=fixed", "trigger.runs=3",
               f"skill={EXAMPLES / 'csv-tidy'}")
    assert res["metrics"]["errors"] + res["metrics"]["timeouts"] > 0, "the faults must land"
    _check_rows(res["results"])
    assert sum(r["runs"] for r in res["results"]) == res["metrics"]["valid_trials"]
    assert sum(r["runs"] + r["errors"] + r["timeouts"] for r in res["results"]) == res["metrics"]["trials"]
    theirs = skill_creator_run_metrics(res["results"])
    for name in ("precision", "recall", "accuracy"):
        # (skill-creator prints 100 % on an empty denominator where we print n/a)
        ours = res["metrics"]["runs"][name]["value"]
        assert theirs[name] == pytest.approx(1.0 if ours is None else ours), name
    assert res["summary"]["passed"] == sum(r["pass"] is True for r in res["results"])


def test_trigger_opt_results_json_recomputes_to_our_numbers(skilleval_cli) -> None:  # noqa: ANN001
    res = _run(skilleval_cli, "+experiment=trigger_opt", "proposer=stub", "optimize.max_iterations=1")
    for entry in res["history"]:
        for part in ("train", "validation"):
            rows = entry[f"{part}_results"]
            if not rows:
                continue
            _check_rows(rows)
            theirs = skill_creator_run_metrics(rows)
            assert theirs["accuracy"] == pytest.approx(entry[f"{part}_run_accuracy"]), part
    for label in ("original", "best"):
        block = res["test"][label]
        _check_rows(block["results"])
        theirs = skill_creator_run_metrics(block["results"])
        assert theirs["accuracy"] == pytest.approx(block["run_accuracy"]["value"]), label
    assert any(r["errors"] + r["timeouts"] for e in res["history"] for r in e["train_results"])
