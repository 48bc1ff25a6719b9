"""Audit of the trigger figures: printed and stored metrics against a hand count from the
store's trial rows, at the configured confidence level."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilleval.stats import wilson

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "experiments" / "changelog-writer"
VALID = ("triggered", "not_triggered")


def test_metrics_match_a_hand_count_at_the_configured_level(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", f"skill={SKILL}", "progress=false",
                          "trigger.runs=3", "trigger.confidence=0.8", "backend.error_rate=0.2",
                          "backend.max_retries=0", "trigger.max_error_rate=1", check=None)
    assert r.returncode in (0, 1), r.stderr
    assert "80% Wilson intervals" in r.stdout and "95%" not in r.stdout
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(path.read_text())
    trials = json.loads(skilleval_cli.run("sql", "select query, should_trigger, outcome from trials "
                                          "where skill = 'changelog-writer'", "--format", "json",
                                          check=0).stdout)
    assert any(t["outcome"] not in VALID for t in trials)
    tp = fp = tn = fn = 0
    for q in {t["query"] for t in trials}:
        mine = [t for t in trials if t["query"] == q]
        valid = [t for t in mine if t["outcome"] in VALID]
        if not valid:
            continue
        rate = sum(t["outcome"] == "triggered" for t in valid) / len(valid)
        if mine[0]["should_trigger"]:
            tp, fn = tp + (rate >= 0.5), fn + (rate < 0.5)
        else:
            fp, tn = fp + (rate >= 0.5), tn + (rate < 0.5)
    m = res["metrics"]["queries"]
    for name, k, n in (("precision", tp, tp + fp), ("recall", tp, tp + fn),
                       ("accuracy", tp + tn, tp + tn + fp + fn)):
        assert (m[name]["k"], m[name]["n"]) == (k, n), name
        assert (m[name]["low"], m[name]["high"]) == pytest.approx(wilson(k, n, 0.8)), name


@pytest.mark.parametrize("policy", ["fixed", "decided"])
def test_markdown_and_junit_label_early_stopped_rates(skilleval_cli, policy: str) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", f"skill={SKILL}", "progress=false",
                      "trigger.runs=5", f"trigger.policy={policy}", "reporter=[json,markdown,junit]",
                      check=None)
    [md] = list(skilleval_cli.outputs.rglob("summary.md"))
    text = md.read_text()
    xml = next(skilleval_cli.outputs.rglob("junit.xml")).read_text()
    if policy == "fixed":
        assert "early-stopped" not in text and "| runs |" in text
        assert 'name="rates" value="unbiased' in xml
    else:
        assert "| runs\\* |" in text and "early-stopped" in text
        assert 'name="rates" value="early-stopped' in xml


def test_gate_line_gives_the_count_behind_the_rate(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", f"skill={SKILL}", "progress=false",
                          "trigger.runs=1", "gate.min_accuracy=0.99", check=1)
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    acc = json.loads(path.read_text())["metrics"]["queries"]["accuracy"]
    [line] = [ln for ln in r.stderr.splitlines() if "gate FAILED" in ln]
    assert f"({acc['k']}/{acc['n']} queries)" in line and f"measured {acc['value']:.3f}" in line
