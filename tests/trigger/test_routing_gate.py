"""A routing run publishes its routing accuracy as its gate metric ``accuracy`` (the general
``gate_metrics`` way, see skilleval.gates), so ``gate.min_accuracy`` acts on it, on its
query-level interval with ``gate.on=lower``, and the gate line says what the number is."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

EX = Path(__file__).resolve().parents[2] / "experiments"
SKILLS = [EX / "changelog-writer", EX / "csv-tidy", EX / "distractors" / "xlsx-editor",
          EX / "distractors" / "pdf-form-filler"]
ARGS = ("+experiment=routing", "skills=[" + ",".join(map(str, SKILLS)) + "]",
        f"cases={EX / 'routing' / 'cases.json'}", "progress=false", "trigger.runs=2")


@pytest.fixture(scope="module")
def routed(tmp_path_factory, make_skilleval_cli):
    cli = make_skilleval_cli(tmp_path_factory.mktemp("routing-gate"))
    cli.run(*ARGS, check=0)
    [path] = cli.results()
    return cli, json.loads(path.read_text())["accuracy"]


def _gate_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if "gate " in ln and "gate.min_accuracy" in ln]


def test_min_accuracy_below_routing_accuracy_passes_and_says_what_it_measured(routed) -> None:
    cli, acc = routed
    assert 0.1 < acc["value"] < 0.95 and acc["low"] < acc["value"]  # room on both sides
    r = cli.run(*ARGS, f"gate.min_accuracy={acc['value'] - 0.05:.3f}", check=0)
    [line] = _gate_lines(r.stdout)
    assert line.startswith("gate passed: routing accuracy (share of valid trials that fired the "
                           "expected skill"), line
    assert "interval over queries" in line
    assert f"measured {acc['value']:.3f} [{acc['low']:.3f}, {acc['high']:.3f}] " \
           f"({acc['k']}/{acc['n']} trials)" in line
    [row] = json.loads(cli.run("sql", "select status from runs order by ts desc limit 1",
                               "--format", "json", check=0).stdout)
    assert row["status"] == "done"


def test_min_accuracy_above_routing_accuracy_fails_with_exit_1_and_one_line(routed) -> None:
    cli, acc = routed
    r = cli.run(*ARGS, f"gate.min_accuracy={acc['value'] + 0.02:.3f}", check=1)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("skilleval:")]
    assert len(lines) == 1 and "gate FAILED: routing accuracy" in lines[0], r.stderr
    assert f"required >= {acc['value'] + 0.02:.3f}".rstrip("0") in lines[0]
    assert "Traceback" not in r.stderr


def test_on_lower_gates_the_query_level_lower_bound(routed) -> None:
    """Between the lower bound (over queries) and the estimate: the point gate passes, the
    lower-bound gate fails, naming the bound and the estimate."""
    cli, acc = routed
    between = f"{(acc['low'] + acc['value']) / 2:.3f}"
    cli.run(*ARGS, f"gate.min_accuracy={between}", check=0)
    r = cli.run(*ARGS, f"gate.min_accuracy={between}", "gate.on=lower", check=1)
    [line] = [ln for ln in r.stderr.splitlines() if ln.startswith("skilleval:")]
    assert "routing accuracy (share of valid trials" in line and "(lower bound): measured " \
           f"{acc['low']:.3f} (estimate {acc['value']:.3f}" in line, line


def test_gates_routing_does_not_measure_are_refused_before_any_call(routed) -> None:
    cli, _ = routed
    r = cli.run(*ARGS, "gate.min_recall=0.5", check=2)
    assert r.stderr.strip().splitlines() == [
        "skilleval: error: gate.min_recall does not apply to experiment routing (it can be gated "
        "on: gate.min_accuracy)"], r.stderr
