"""`skilleval report`: one self-contained HTML file, opened offline in a real chromium."""
from __future__ import annotations

import html as htmllib
import json
import re

import pytest

from tests.viewer.conftest import open_offline

pytestmark = pytest.mark.timeout(240)


def _report(viewer_env, tmp_path, which: str, name: str):
    out = tmp_path / name
    proc = viewer_env.cli.run("report", which, "-o", str(out), check=0)
    assert out.is_file(), proc.stderr
    return out




def test_report_latest_after_trigger_eval_shows_every_query_and_rate(skilleval_cli, page, tmp_path) -> None:
    """The acceptance line: `skilleval +experiment=trigger_eval` then `skilleval report latest -o r.html`."""
    skilleval_cli.run("+experiment=trigger_eval", check=0)
    out = tmp_path / "r.html"
    skilleval_cli.run("report", "latest", "-o", str(out), check=0)
    open_offline(page, out)
    pg = page.page
    pg.locator("main").get_by_text("Per query").wait_for(timeout=10_000)
    text = pg.inner_text("main")
    rows = json.loads(skilleval_cli.run("sql", "select query, triggers, valid_runs, trigger_rate from queries",
                                        "--format", "json", check=0).stdout)
    assert len(rows) == 20
    table = [[c.strip() for c in tr.locator(":scope > td").all_inner_texts()]
             for tr in pg.locator("table.queries tbody tr").all()]
    assert len(table) == 20
    # the page names the skill and shows the run's headline metrics above the table
    assert "changelog-writer" in text
    assert all(m in text.lower() for m in ("precision", "recall", "accuracy")), text[:500]
    for r in rows:
        line = next((t for t in table if " ".join(t[0].split()) == " ".join(r["query"].split())), None)
        assert line is not None, (r["query"], table[:2])
        assert line[2] == f"{r['triggers']} / {r['valid_runs']}"
        assert line[3].startswith(f"{round(100 * r['trigger_rate'])}% [")
    assert page.blocked == [] and page.errors == []


def test_report_is_self_contained_and_hostile_data_runs_nothing(viewer_env, page, tmp_path) -> None:
    out = _report(viewer_env, tmp_path, viewer_env.runs["trigger_eval"], "h.html")
    html = out.read_text(encoding="utf-8")
    csp = htmllib.unescape(re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1))
    assert csp.startswith("default-src 'none'; script-src 'sha256-") and "unsafe" not in csp
    assert "connect-src" not in html.split("</head>")[0]  # nothing may be fetched
    assert "<script src=" not in html and "<link rel=\"stylesheet\"" not in html
    assert "</script><script>window.__pwned" not in html  # data cannot close the data block
    open_offline(page, out)
    pg = page.page
    pg.locator("main").get_by_text("Per query").wait_for(timeout=10_000)
    text = pg.inner_text("main")
    rows = json.loads(viewer_env.cli.run("sql", f"select query, triggers, valid_runs from queries where run_id = "
                                         f"'{viewer_env.runs['trigger_eval']}'", "--format", "json", check=0).stdout)
    assert len(rows) == 6
    for r in rows:
        assert r["query"].split(" HOSTILE")[0][:20] in text
        assert f"{r['triggers']} / {r['valid_runs']}" in text
    assert pg.evaluate("window.__pwned") is None
    assert page.blocked == [] and all(u.startswith(("file:", "data:")) for u in page.requests)
    assert page.errors == []


def test_report_of_functional_run_has_tables_and_no_network(viewer_env, page, tmp_path) -> None:
    out = _report(viewer_env, tmp_path, viewer_env.runs["functional_eval"], "f.html")
    open_offline(page, out)
    pg = page.page
    pg.locator("main").get_by_text("Prompt").first.wait_for(timeout=10_000)
    assert pg.locator("table.data td", has_text="@example.com").count() > 0  # csv-tidy output as a table
    assert "HOSTILE-SCRIPT" in pg.inner_text("main")
    assert pg.evaluate("window.__pwned") is None
    pg.keyboard.press("ArrowRight")
    pg.get_by_text("eval 2 of").wait_for(timeout=5000)
    pg.goto(out.as_uri() + f"#/run/{viewer_env.runs['functional_eval']}/benchmark")
    pg.locator("main").get_by_text("Per expectation").wait_for(timeout=10_000)
    assert page.blocked == [] and page.errors == []


def test_report_of_optimisation_and_sweep(viewer_env, page, tmp_path) -> None:
    out = _report(viewer_env, tmp_path, viewer_env.runs["trigger_opt"], "o.html")
    open_offline(page, out)
    page.page.locator("main").get_by_text("Candidates").wait_for(timeout=10_000)
    assert page.page.locator("canvas").count() >= 1
    assert "accepted" in page.page.inner_text("main") or "rejected" in page.page.inner_text("main")
    sweep = json.loads(viewer_env.cli.run("sql", "select sweep_id from runs group by 1 having count(*) > 1",
                                          "--format", "json", check=0).stdout)[0]["sweep_id"]
    out2 = _report(viewer_env, tmp_path, sweep, "s.html")
    page.page.goto(out2.as_uri())
    page.page.locator("main").get_by_text("Sweep").first.wait_for(timeout=10_000)
    assert "trigger.threshold" in page.page.inner_text("main")
    assert page.blocked == [] and page.errors == []


def test_report_bad_input_exits_2_with_one_line(viewer_env, tmp_path) -> None:
    proc = viewer_env.cli.run("report", "no-such-run", "-o", str(tmp_path / "x.html"), check=2)
    assert proc.stderr.strip().count("\n") == 0 and "no-such-run" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = viewer_env.cli.run("report", "latest", check=2)
    assert "-o" in proc.stderr and "Traceback" not in proc.stderr
    proc = viewer_env.cli.run("view", "--port", "99999", check=2)
    assert proc.stderr.strip().count("\n") == 0
    proc = viewer_env.cli.run("view", "--store", str(tmp_path / "missing"), check=2)
    assert "missing" in proc.stderr and proc.stderr.strip().count("\n") == 0


def test_benchmark_page_means_are_the_ones_the_delta_is_about(skilleval_cli, sim, page, tmp_path) -> None:  # noqa: ANN001
    """One execution errors (HTTP 400, no retry), so one eval has fewer valid runs: the pooled
    run_summary mean then differs from the evals-weighted mean the console, benchmark.md and
    the delta use. The page showed the pooled one next to the weighted delta (columns that
    did not subtract to the delta); it now shows the console's means, the pool beside them."""
    sim.configure(fail_next=[400])
    r = skilleval_cli.run("+experiment=functional_eval", "functional.runs=2", "functional.only=[1,2]",
                          "functional.analyze=false", "functional.bootstrap=50", "functional.concurrency=1",
                          "backend=anthropic_api", f"backend.base_url={sim.url}", "backend.model=sim-1",
                          "backend.max_retries=0", check=0, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    [bp] = skilleval_cli.outputs.rglob("iteration-1/benchmark.json")
    b = json.loads(bp.read_text())
    pr = b["delta_stats"]["pass_rate"]
    assert len(b["errored_runs"]) == 1  # (the two means then differ, by how much varies)
    assert f"{pr['primary_mean']:.0%}" in r.stdout and f"{pr['baseline_mean']:.0%}" in r.stdout  # the console
    out = tmp_path / "bench.html"
    skilleval_cli.run("report", "latest", "-o", str(out))
    open_offline(page, out)
    run_id = b["metadata"]["run_id"]
    page.page.goto(out.as_uri() + f"#/run/{run_id}/benchmark")
    row = page.page.locator("main table tr", has=page.page.locator("th", has_text="pass rate"))
    row.first.wait_for(timeout=10_000)
    cells = row.first.locator("td").all_inner_texts()

    def shows(cell: str, value: float, after: str = "") -> bool:
        """The cell shows `value` to 2 places (first number, or the one after `after`). Compared
        as numbers: JS toFixed rounds 0.625 up, Python's format rounds it to even."""
        text = cell.split(after, 1)[1] if after else cell
        m = re.match(r"\s*([+-]?\d+\.\d+)", text)
        return m is not None and abs(float(m.group(1)) - value) <= 0.005 + 1e-9
    assert shows(cells[0], pr["primary_mean"]) and shows(cells[1], pr["baseline_mean"]), cells
    assert shows(cells[0], b["run_summary"]["with_skill"]["pass_rate"]["mean"], after="pooled"), cells
    assert shows(cells[2], pr["delta"]), cells
    # the errored run says why it has no grades on the Outputs page
    bad = b["errored_runs"][0]
    evals = sorted({r["eval_name"] for r in b["runs"]} | {bad["eval_name"]})
    page.page.goto(out.as_uri() + f"#/run/{run_id}/outputs/{evals.index(bad['eval_name'])}")
    page.page.locator("main").get_by_text("Prompt").first.wait_for(timeout=10_000)
    for d in page.page.locator("details.run").all():
        d.evaluate("e => e.open = true")
    shown = page.page.locator("main p.errors").all_inner_texts()
    assert any("execution error" in t and "400" in t and "not graded" in t for t in shown), shown
    assert page.blocked == [] and page.errors == []


def test_model_outputs_named_like_bookkeeping_or_colliding_are_all_viewable(skilleval_cli, sim, page, tmp_path) -> None:  # noqa: ANN001
    """The model writes outputs/transcript.md and outputs/metrics.json (names the workspace
    uses for its own files, and the viewer hides) and both report.csv and outputs/report.csv
    (one workspace path): every one of them must reach the workspace unchanged and show."""
    writes = {"outputs/transcript.md": "MODEL-TRANSCRIPT-OUTPUT", "outputs/metrics.json": '{"m": "MODEL-METRICS-OUTPUT"}',
              "report.csv": "k,v\nTOP-LEVEL-CSV,1\n", "outputs/report.csv": "k,v\nOUTPUTS-CSV,2\n"}
    sim.configure(hostile_tool_calls=[{"name": "write_file", "input": {"path": k, "content": v}}
                                      for k, v in writes.items()])
    skilleval_cli.run("+experiment=functional_eval", "functional.runs=1", "functional.only=[1]",
                      "functional.analyze=false", "functional.bootstrap=50", "functional.concurrency=1",
                      "backend=anthropic_api", f"backend.base_url={sim.url}", "backend.model=sim-1",
                      check=0, timeout=300)
    [bp] = skilleval_cli.outputs.rglob("iteration-1/benchmark.json")
    texts = [p.read_text(errors="replace") for p in bp.parent.rglob("outputs/**/*") if p.is_file()]
    for marker in ("MODEL-TRANSCRIPT-OUTPUT", "MODEL-METRICS-OUTPUT", "TOP-LEVEL-CSV", "OUTPUTS-CSV"):
        assert any(marker in t for t in texts), marker  # nothing overwritten
    assert any(t.startswith("## Task") for t in texts)  # our own transcript is still there
    out = tmp_path / "outputs.html"
    skilleval_cli.run("report", "latest", "-o", str(out))
    open_offline(page, out)
    run_id = json.loads(bp.read_text())["metadata"]["run_id"]
    page.page.goto(out.as_uri() + f"#/run/{run_id}/outputs/0")
    page.page.locator("main").get_by_text("Prompt").first.wait_for(timeout=10_000)
    for d in page.page.locator("details.run").all():
        d.evaluate("e => e.open = true")
    shown = page.page.inner_text("main")
    for marker in ("MODEL-TRANSCRIPT-OUTPUT", "MODEL-METRICS-OUTPUT", "TOP-LEVEL-CSV", "OUTPUTS-CSV"):
        assert marker in shown, marker
    assert page.blocked == [] and page.errors == []


def test_a_run_that_ended_without_a_workspace_says_so(skilleval_cli, page, tmp_path) -> None:  # noqa: ANN001
    """A budget of 0 calls stops the run before any execution: no workspace will ever come,
    so the Outputs page must not say it is written 'when the run ends' (and poll for it)."""
    r = skilleval_cli.run("+experiment=functional_eval", "budget.max_calls=0", check=4)
    out = tmp_path / "none.html"
    skilleval_cli.run("report", "latest", "-o", str(out))
    open_offline(page, out)
    run_id = json.loads(skilleval_cli.run("sql", "select run_id from runs", "--format", "json").stdout)[0]["run_id"]
    page.page.goto(out.as_uri() + f"#/run/{run_id}/outputs")
    page.page.locator("main").get_by_text("without writing a workspace").wait_for(timeout=10_000)
    assert "budget_stopped" in page.page.inner_text("main") and "when the run ends" not in page.page.inner_text("main")
    assert r.returncode == 4 and page.blocked == [] and page.errors == []


def test_benchmark_page_shows_the_feedback_on_the_previous_iteration(skilleval_cli, page, tmp_path) -> None:  # noqa: ANN001
    """functional_eval reads back the reviews of the previous iteration (benchmark.json
    ``previous_feedback``); the Benchmark page lists them under the new numbers, as text."""
    ws = tmp_path / "ws"
    args = ("+experiment=functional_eval", "functional.runs=1", "functional.analyze=false",
            "functional.only=[1]", f"functional.workspace={ws}", "progress=false")
    skilleval_cli.run(*args, check=0, timeout=300)
    [run1] = sorted(p.parent for p in (ws / "iteration-1").rglob("with_skill/run-1/outputs"))
    rid = run1.relative_to(ws / "iteration-1").as_posix().replace("/", "-")
    hostile = "<b id=injected>bold?</b> the totals row is missing"
    (ws / "iteration-1" / "feedback.json").write_text(json.dumps(
        {"reviews": [{"run_id": rid, "feedback": hostile, "timestamp": "2026-12-01T00:00:00Z"}],
         "status": "complete"}), encoding="utf-8")
    skilleval_cli.run(*args, check=0, timeout=300)
    run_id = json.loads((ws / "iteration-2" / "benchmark.json").read_text())["metadata"]["run_id"]
    out = tmp_path / "fb.html"
    skilleval_cli.run("report", "latest", "-o", str(out), check=0)
    open_offline(page, out)
    page.page.goto(out.as_uri() + f"#/run/{run_id}/benchmark")
    page.page.get_by_role("heading", name="Feedback on iteration-1 (complete)").wait_for(timeout=10_000)
    item = page.page.locator("ul.feedback-previous li")
    assert item.count() == 1 and item.first.inner_text() == f"{rid}: {hostile}"
    assert page.page.locator("#injected").count() == 0  # shown as text, never as markup
    assert page.blocked == [] and page.errors == []
