"""Audit: the viewer's intervals are the run's own, at the run's level.

A run with trigger.confidence=0.8 printed 80 % Wilson intervals (console, results.json,
junit.xml); its report and viewer page recomputed 95 % ones and said "95% CI". The Runs
page labelled every headline "(95% CI)", also a functional run's 80 % delta interval."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tests.viewer.conftest import open_latest_report


def test_trigger_page_uses_the_runs_level(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=2", "trigger.confidence=0.8",
                      "progress=false", "reporter=[json]", check=0)
    [res] = skilleval_cli.results()
    acc = json.loads(res.read_text())["metrics"]["queries"]["accuracy"]
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", wait_text="accuracy (queries)")
    card = pg.locator(".card").first.inner_text()
    want = f"80% CI {round(100 * acc['low'])}%–{round(100 * acc['high'])}%"
    assert want in card, card
    assert "rate [80% CI]" in pg.locator("main").inner_text()
    assert "95%" not in pg.locator("main").inner_text()
    assert page.errors == []


def test_runs_page_says_a_headline_level_other_than_95(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=functional_eval", "functional.runs=2", "functional.analyze=false",
                      "functional.only=[1,2]", "functional.confidence=0.8", "progress=false",
                      check=0, timeout=300)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", route="#/runs", wait_text="Δ pass rate")
    cell = pg.locator("main").get_by_text("Δ pass rate").first.inner_text()
    assert re.search(r"\[[-+]?\d\.\d\d, [-+]?\d\.\d\d\] \(80% CI\)", cell), cell


def test_optimisation_page_uses_the_runs_level(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    """trigger_opt with trigger.confidence=0.8: results.json's test block holds 80 % intervals,
    and the page's chart band, candidates and test table said 95 %."""
    skilleval_cli.run("+experiment=trigger_opt", "optimize.max_iterations=1", "trigger.confidence=0.8",
                      "progress=false", check=0, timeout=300)
    [res] = skilleval_cli.results()
    acc = json.loads(res.read_text())["test"]["best"]["accuracy"]
    run_id = json.loads(skilleval_cli.run("sql", "select run_id from runs", "--format", "json",
                                          check=0).stdout)[0]["run_id"]
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", route=f"#/run/{run_id}/opt",
                            wait_text="Original vs best")
    pg.locator("table.grid").first.wait_for(timeout=10_000)
    text = pg.locator("main").inner_text()
    assert "band = 80% CI" in text and "intervals: 80% CI" in text and "accuracy [80% CI]" in text
    assert "95%" not in text
    assert f"{round(100 * acc['low'])}%–{round(100 * acc['high'])}%" in text, text
    assert page.errors == []
