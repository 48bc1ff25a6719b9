"""The Routing page (`skilleval view` and `skilleval report`) in a real headless chromium: a
heatmap drawn from a real routing run in a real DuckDB store, whose cells are the run's
confusion matrix (and a hand count of the stored trials), with a hostile skill description
that stays text."""
from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.viewer.conftest import SENTINEL, open_offline, start_view

pytestmark = pytest.mark.timeout(240)

REPO = Path(__file__).resolve().parents[2]
HOSTILE_DESC = (f'</script><script>{SENTINEL}</script><img src=x onerror="{SENTINEL}"> '
                "HOSTILE-DESC: use for weekly widget reports.")
CASES = [
    {"query": "write release notes for v2.0 from the merged pull requests", "expected_skill": "changelog-writer"},
    {"query": "update CHANGELOG.md with this week's commits", "expected_skill": "changelog-writer"},
    {"query": "dedupe the rows in customers.csv and fix the headers", "expected_skill": "csv-tidy"},
    {"query": "this tsv export has mixed date formats, normalise them", "expected_skill": "csv-tidy"},
    {"query": "make the weekly widget reports", "expected_skill": "widget-reports"},
    {"query": "what is the capital of France", "expected_skill": None},
    {"query": "fix the off-by-one bug in pagination.py", "expected_skill": None},
]


@pytest.fixture(scope="module")
def routing_run(tmp_path_factory: pytest.TempPathFactory, make_skilleval_cli: Any) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("routing-view")
    cli = make_skilleval_cli(root)
    hostile = root / "widget-reports"
    hostile.mkdir()
    (hostile / "SKILL.md").write_text("---\nname: widget-reports\ndescription: " + json.dumps(HOSTILE_DESC)
                                      + "\n---\n\n# Widget reports\n\nMake them.\n", encoding="utf-8")
    cases = root / "cases.json"
    cases.write_text(json.dumps(CASES), encoding="utf-8")
    skills = [REPO / "experiments" / "changelog-writer", REPO / "experiments" / "csv-tidy", hostile]
    cli.run("+experiment=routing", "skills=[" + ",".join(map(str, skills)) + "]", f"cases={cases}",
            "progress=false", "trigger.runs=3", "backend.error_rate=0.15", "backend.max_retries=0",
            "trigger.max_error_rate=1", check=0)
    [results] = cli.results()
    run_id = json.loads(cli.run("sql", "select run_id from runs limit 1", "--format", "json",
                                check=0).stdout)[0]["run_id"]
    trials = json.loads(cli.run("sql", "select query, outcome, fired from trials", "--format", "json",
                                check=0).stdout)
    return {"cli": cli, "run_id": run_id, "res": json.loads(results.read_text()), "trials": trials}


def _hand_count(trials: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    expected = {c["query"]: c["expected_skill"] or "none" for c in CASES}
    out: Counter[tuple[str, str]] = Counter()
    for t in trials:
        fired = "error" if t["outcome"] not in ("triggered", "not_triggered") else (t["fired"] or "none")
        out[(expected[t["query"]], fired)] += 1
    return out


def _heatmap(pg: Any) -> dict[str, dict[str, int]]:
    table = pg.locator("table.heatmap")
    table.wait_for(timeout=10_000)
    cols = [c.strip() for c in table.locator("thead th").all_inner_texts()][1:-1]
    out = {}
    for tr in table.locator("tbody tr").all():
        name = tr.locator(":scope > th").inner_text().strip()
        cells = [c.strip() for c in tr.locator(":scope > td").all_inner_texts()][:-1]
        out[name] = dict(zip(cols, map(int, cells)))
    return out


def _check_page(pg: Any, run: dict[str, Any]) -> None:
    shown = _heatmap(pg)
    res = run["res"]
    assert shown == res["matrix"]  # every cell, including none, other and error
    hand = _hand_count(run["trials"])
    assert {(e, f): n for e, row in shown.items() for f, n in row.items() if n} == dict(hand)
    assert res["errors"] > 0 and sum(r["error"] for r in shown.values()) == res["errors"]
    # colour by row share: a non-empty cell is painted, an empty one is not
    painted = pg.evaluate("""() => [...document.querySelectorAll('table.heatmap tbody td[data-key]')]
        .map(td => [td.textContent, td.style.backgroundColor])""")
    assert all(bool(bg) == (text != "0") for text, bg in painted)
    text = pg.inner_text("main")
    assert "HOSTILE-DESC" in text and "<img src=x onerror=" in text and "</script><script>" in text
    assert pg.evaluate("window.__pwned") is None
    assert pg.locator("main img").count() == 0


@pytest.fixture(scope="module")
def routing_viewer(routing_run: dict[str, Any]) -> Iterator[Any]:
    vp = start_view(routing_run["cli"].store, routing_run["cli"].env)
    yield vp
    os.kill(vp.proc.pid, signal.SIGTERM)
    vp.proc.wait(timeout=10)


def test_live_heatmap_is_the_confusion_matrix_and_hostile_text_runs_nothing(
        routing_run, routing_viewer, page) -> None:  # noqa: ANN001
    page.page.goto(routing_viewer.url + f"#/run/{routing_run['run_id']}")
    _check_page(page.page, routing_run)  # the routing page is the run's first page
    # and its only one: the single-skill trigger page would read the matrix as one skill's
    assert page.page.locator("nav.tabs a").all_inner_texts() == ["Routing"]
    assert page.errors == []


def test_static_report_has_the_same_heatmap_offline(routing_run, page, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "routing.html"
    routing_run["cli"].run("report", routing_run["run_id"], "-o", str(out), check=0)
    open_offline(page, out)
    _check_page(page.page, routing_run)
    assert page.blocked == [] and page.errors == []
