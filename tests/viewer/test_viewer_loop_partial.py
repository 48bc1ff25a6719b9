"""Audit: a budget-stopped run's pages say its numbers are partial.

The console and summary.md say "Partial: the run was stopped by the budget"; the report's
trigger page showed accuracy 0 % [0 %, 30 %] over the 9 queries that got a verdict, under
a status badge only, with nothing beside the numbers."""
from __future__ import annotations

import json
from pathlib import Path

from tests.viewer.conftest import open_latest_report


def test_a_budget_stopped_trigger_run_is_labelled_partial(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=3", "budget.max_calls=25",
                      "progress=false", "reporter=[json]", check=4)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", wait_text="accuracy (queries)")
    note = pg.locator("main p.partial").inner_text()
    assert note.startswith("Partial: this run was stopped by the budget")
    # above the numbers
    assert pg.evaluate("() => document.querySelector('main p.partial').compareDocumentPosition("
                       "document.querySelector('main .cards')) & Node.DOCUMENT_POSITION_FOLLOWING") != 0
    assert page.errors == []


def test_a_finished_run_has_no_partial_note(default_trigger_run, tmp_path: Path, page) -> None:  # noqa: ANN001
    pg = open_latest_report(page, default_trigger_run.cli, tmp_path / "r.html", wait_text="accuracy (queries)")
    assert pg.locator("main p.partial").count() == 0


def test_an_untrustworthy_run_says_it_could_not_measure(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=2", "backend.error_rate=0.5",
                      "backend.timeout_rate=0.3", "progress=false", "reporter=[json]", check=3)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", wait_text="accuracy (queries)")
    note = pg.locator("main p.partial").inner_text()
    assert note.startswith("Could not measure (exit 3): ") and "not trustworthy" in note
    # per query, errors and timeouts apart (the column summed them under "errors")
    assert "errors / timeouts" in pg.locator("main table.queries thead").inner_text()
    [res] = skilleval_cli.results()
    rows = json.loads(res.read_text())["results"]
    want = sorted(f"{r['errors']} / {r['timeouts']}" for r in rows)
    cells = pg.evaluate("() => [...document.querySelectorAll('main table.queries > tbody > tr')]"
                               ".map(r => r.lastElementChild.innerText.trim())")
    assert sorted(cells) == want and any(r["timeouts"] for r in rows)
