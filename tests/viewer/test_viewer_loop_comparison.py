"""Audit: the Comparison page (previously checked by hand only) in real chromium.

A blind comparison whose judge failed (status judge_error) has no winner in either order;
the page showed "tie" in both order columns. Ties and wins of real verdicts still show."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.viewer.conftest import open_latest_report
from skilleval.store.catalog import Store


def test_comparison_page_never_shows_an_error_as_a_tie(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=compare", "functional.runs=1", "functional.only=[1]",
                      "progress=false", check=0, timeout=300)
    import skilleval.functional.records  # noqa: F401  (registers the table schemas)

    store = Store(skilleval_cli.store)
    [ok] = store.query("select * from comparisons").to_pylist()
    bad = {**ok, "key": "errored-" + ok["key"], "ts": dt.datetime.now(dt.timezone.utc), "repeat": 1,
           "status": "judge_error", "error": "invalid reply: HOSTILE-ERR", "winner_arm": None,
           "order1_winner_arm": None, "order2_winner_arm": None, "consistent": None,
           "score_primary": None, "score_baseline": None, "comparison_json": None, "analysis_json": None}
    w = store.writer("comparisons", ok["experiment"], ok["run_id"])
    w.write([bad])
    w.close()
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", link="comparison", wait_text="HOSTILE-ERR")
    rows = pg.evaluate("() => [...document.querySelectorAll('main table tbody tr')].map(r => "
                       "[...r.children].slice(1, 5).map(td => td.innerText.trim()))")
    by_run = {r[0]: r[1:] for r in rows}
    assert by_run["2"][:2] == ["— (no verdict)", "— (no verdict)"] and "judge_error" in by_run["2"][2]
    w1, w2 = ok["order1_winner_arm"], ok["order2_winner_arm"]
    assert by_run["1"][:2] == ["tie" if w1 == "TIE" else w1, "tie" if w2 == "TIE" else w2]
    assert page.errors == []


def test_comparison_page_and_runs_line_show_the_runs_tally(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    """The tally the terminal printed (wins per arm, sign test, position consistency, judge
    errors) was on no page: the Comparison page listed the pairs, the Runs line was empty."""
    import json

    from skilleval.viewer.api import Api

    skilleval_cli.run("+experiment=compare", "functional.runs=1", "functional.only=[1,2]",
                      "progress=false", check=0, timeout=300)
    store = Store(skilleval_cli.store)
    [run] = store.query("select summary_json from runs").to_pylist()
    s = json.loads(run["summary_json"])
    wins = s["wins"]
    [row] = Api(store).get("/api/runs")["rows"]
    assert row["headline"] == {"label": "blind comparison", "text":
                               f"with_skill {wins.get('with_skill', 0)} · without_skill "
                               f"{wins.get('without_skill', 0)} · tie {wins.get('TIE', 0)}, "
                               f"sign test p={s['sign_test_p']:.2g}"}
    # its work is judged pairs, not trials: the Runs line said "0"
    assert row["trials"] == 0 and row["work"] == f"{s['judged']} of {s['pairs']} pairs judged"
    runs_page = open_latest_report(page, skilleval_cli, tmp_path / "runs.html", route="#/runs",
                                   wait_text="pairs judged")
    assert f"{s['judged']} of {s['pairs']} pairs judged" in runs_page.locator("main table tbody tr").first.inner_text()
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", link="comparison",
                            wait_text="position consistency")
    cards = pg.locator("main .card").all_inner_texts()
    assert any(c.startswith("wins (primary / baseline / tie)\n"
                            f"{wins.get('with_skill', 0)} / {wins.get('without_skill', 0)} / {wins.get('TIE', 0)}")
               for c in cards), cards
    assert any(c.startswith("judge errors\n0") for c in cards), cards
    assert page.errors == []
