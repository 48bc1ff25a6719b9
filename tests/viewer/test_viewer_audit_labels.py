"""The trigger page labels early-stopped rates (trigger.policy=decided): verdicts are exact,
the rates are biased, and a reader of the page must see which ones."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.viewer.conftest import open_offline

pytestmark = pytest.mark.timeout(240)
SKILL = Path(__file__).resolve().parents[2] / "experiments" / "changelog-writer"


def test_report_marks_exactly_the_early_stopped_rates(skilleval_cli, page, tmp_path) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", f"skill={SKILL}", "trigger.policy=decided",
                      "trigger.runs=5", "progress=false", check=None)
    rows = json.loads(skilleval_cli.run("sql", "select query, runs, planned_runs from queries",
                                        "--format", "json", check=0).stdout)
    stopped = {" ".join(r["query"].split()) for r in rows if r["runs"] < r["planned_runs"]}
    assert stopped
    out = tmp_path / "r.html"
    skilleval_cli.run("report", "latest", "-o", str(out), check=0)
    open_offline(page, out)
    page.page.locator("main").get_by_text("Per query").wait_for(timeout=10_000)
    table = [[c.strip() for c in tr.locator(":scope > td").all_inner_texts()]
             for tr in page.page.locator("table.queries tbody tr").all()]
    assert len(table) == len(rows)
    marked = {" ".join(t[0].split()) for t in table if "(early-stopped)" in t[3]}
    assert marked == stopped
    assert page.errors == []


def test_routing_page_states_the_runs_confidence(skilleval_cli, page, tmp_path) -> None:  # noqa: ANN001
    """trigger.confidence=0.8: the page's intervals are the run's 80 % ones, labelled so
    (the labels said 95 % whatever the run used)."""
    ex = Path(__file__).resolve().parents[2] / "experiments"
    skills = [ex / "changelog-writer", ex / "csv-tidy", ex / "distractors" / "xlsx-editor",
              ex / "distractors" / "pdf-form-filler"]
    r = skilleval_cli.run("+experiment=routing", "skills=[" + ",".join(map(str, skills)) + "]",
                          f"cases={ex / 'routing' / 'cases.json'}", "progress=false", "trigger.runs=1",
                          "trigger.confidence=0.8", check=0)
    assert "80% intervals over queries" in r.stdout
    out = tmp_path / "r.html"
    skilleval_cli.run("report", "latest", "-o", str(out), check=0)
    open_offline(page, out)
    run_id = json.loads(skilleval_cli.run("sql", "select run_id from runs", "--format", "json",
                                          check=0).stdout)[0]["run_id"]
    page.page.goto(out.as_uri() + f"#/run/{run_id}/routing")
    page.page.locator("table.routing-skills").wait_for(timeout=10_000)
    text = page.page.inner_text("main")
    assert "precision [80% CI]" in text and "80% CI " in text and "95%" not in text
    assert page.errors == []
