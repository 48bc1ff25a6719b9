"""Audit of the human loop: `diff latest~1 latest` after a gate failed.

A run whose gate failed (status ``gate_failed``) is a finished measurement, and it is the
one a person wants to see right after the red check. `latest` skipped it: with runs
A (done), B (done), C (gate_failed), ``diff latest~1 latest`` compared A with B and said
nothing about C."""
from __future__ import annotations

import json

import pytest

BETTER = "Writes CHANGELOG.md entries and release notes from git history"


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory, make_skilleval_cli):  # noqa: ANN001, ANN201
    cli = make_skilleval_cli(tmp_path_factory.mktemp("gatefailed"))
    common = ["+experiment=trigger_eval", "trigger.runs=1", "progress=false", "reporter=[json]"]
    cli.run(*common, check=0)
    cli.run(*common, "trigger.threshold=0.4", check=0)
    cli.run(*common, f"description={BETTER}", "gate.min_recall=1.0", check=1)
    ids = [json.loads(p.read_text())["run_id"] for p in cli.results()]
    return cli, ids


def test_diff_latest_is_the_run_whose_gate_just_failed(three_runs) -> None:  # noqa: ANN001
    cli, (a, b, c) = three_runs
    out = json.loads(cli.run("diff", "latest~1", "latest", "--format", "json", check=0).stdout)
    assert (out["a"]["run_id"], out["b"]["run_id"]) == (b, c)


def test_the_regression_gate_baseline_still_skips_gate_failed_runs(three_runs) -> None:  # noqa: ANN001
    """A run that failed its gate must not become the bar the next run is held to."""
    cli, (a, b, c) = three_runs
    p = cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false", "reporter=[json]",
                "gate.baseline=latest", "gate.max_regression=0.05", check=0)
    assert f"baseline {b}" in p.stdout + p.stderr, p.stdout + p.stderr
