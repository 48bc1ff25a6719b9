"""A run count no one means (``trigger.runs=100000``: 2 million trials for 20 queries) is refused
up front with one line, instead of stalling silently while every trial is planned."""
from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.parametrize("args", [
    ("+experiment=trigger_eval", "trigger.runs=100000"),
    ("+experiment=trigger_eval", "trigger.runs=1001"),
    ("+experiment=trigger_eval", "trigger.policy=sequential", "trigger.max_runs=5000"),
    ("+experiment=trigger_opt", "trigger.runs=100000"),
])
def test_too_many_runs_per_query_exit_2_with_one_line(skilleval_cli, args) -> None:
    proc = skilleval_cli.run(*args, timeout=60)  # before the check: a silent multi-minute stall
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "limit of 1000 runs per query" in lines[0], proc.stderr[-2000:]
    key = args[-1].split("=")[0]
    assert f"{key}=" in lines[0] and "Traceback" not in proc.stderr


def test_check_evals_runs_has_the_same_limit(skilleval_cli) -> None:
    sets = Path(__file__).resolve().parents[2] / "experiments" / "csv-tidy" / "evals"
    proc = skilleval_cli.run("check-evals", str(sets / "trigger_eval.json"), "--runs", "100000",
                             timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--runs" in proc.stderr


def test_the_limit_itself_still_runs(skilleval_cli, tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([
        {"query": "write the changelog entry for release 2.4 from these merged pull requests",
         "should_trigger": True},
        {"query": "what is the capital of portugal", "should_trigger": False}]))
    proc = skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1000", f"cases={cases}",
                             timeout=120)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "trials: 2000 (2000 valid" in " ".join(proc.stdout.split())
