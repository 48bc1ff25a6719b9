"""The viewer shows a sentence-attribution run: its table of sentence -> effect, ranked as the
terminal ranks it, and the Runs page names the top sentence. The run page said "nothing to
show for this run yet" for a finished attribute run. A sentence is hostile text."""
from __future__ import annotations

import json
from pathlib import Path

from tests.viewer.conftest import open_latest_report
from skilleval.stats import signed
from skilleval.store.catalog import Store
from skilleval.viewer.api import Api

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "experiments" / "csv-tidy" / "evals" / "trigger_eval.json"
HOSTILE = "Results are <img src=x onerror=alert(1)> polite."


def test_attribute_run_has_its_table_in_the_viewer(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    skill = tmp_path / "tidy-helper"
    skill.mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: tidy-helper\ndescription: 'Clean messy CSV and TSV files by removing duplicate "
        "rows, trimming whitespace and converting dates to ISO 8601. It is a careful assistant. "
        f"{HOSTILE}'\n---\n# Tidy helper\n")
    skilleval_cli.run("+experiment=attribute", f"skill={skill}", f"cases={CASES}", "trigger.runs=2",
                      "attribute.bootstrap=200", "progress=false")
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(path.read_text())
    top = res["ranking"][0]

    [row] = Api(Store(skilleval_cli.store)).get("/api/runs")["rows"]
    assert row["headline"]["label"] == "top sentence of 3"
    assert row["headline"]["text"].startswith(f"#{top + 1}, Shapley Δrecall ")

    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", wait_text="What each sentence does")
    assert pg.locator("main h1").inner_text().startswith("Sentence attribution")
    rows = pg.locator("table.attribution tbody tr")
    assert rows.count() == 3
    # ranked as results.json ranks them; the "#" column is the sentence's place in the description
    assert [int(rows.nth(k).locator("td").nth(1).inner_text()) for k in range(3)] == \
        [i + 1 for i in res["ranking"]]
    assert rows.nth(0).locator("td").nth(2).inner_text() == res["sentences"][top]
    shap = res["attribution"][top]["shapley_recall"]
    assert rows.nth(0).locator("td").nth(3).inner_text().startswith(f"{signed(shap['value'])} [")
    # the hostile sentence is text: no element was made from it
    assert pg.locator("main").get_by_text(HOSTILE).count() == 1
    assert pg.locator("main img").count() == 0
    assert page.errors == []
