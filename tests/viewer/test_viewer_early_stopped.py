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
