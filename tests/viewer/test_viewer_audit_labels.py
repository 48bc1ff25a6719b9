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
    assert "80% Wilson intervals" in r.stdout
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


def test_benchmark_page_means_are_the_ones_the_delta_is_about(skilleval_cli, page, tmp_path) -> None:
    """Evals with unequal valid runs: pooled means (0.75 vs 0.00) sat beside Δ +0.50, which is
    the difference of the per-eval-weighted means (0.50 vs 0.00)."""
    from skilleval.functional.benchmark import build_benchmark

    skill = Path(__file__).resolve().parents[2] / "experiments" / "csv-tidy"
    skilleval_cli.run("+experiment=functional_eval", f"skill={skill}", "functional.only=[1]",
                      "functional.runs=1", "functional.analyze=false", "progress=false", check=0)
    [bench_path] = [p for p in skilleval_cli.outputs.rglob("benchmark.json") if "workspace" in p.parts]

    def run(ev: str, cfg: str, n: int, rate: float) -> dict:
        return {"eval_id": ev, "eval_name": ev, "configuration": cfg, "run_number": n, "status": "ok",
                "result": {"pass_rate": rate, "time_seconds": 1.0, "tokens": 10}, "expectations": []}

    runs = [run("x", "with_skill", i, 1.0) for i in range(3)] + [run("x", "without_skill", 0, 0.0)]
    runs += [run("y", "with_skill", 0, 0.0)] + [run("y", "without_skill", i, 0.0) for i in range(3)]
    bench = build_benchmark(runs, {"skill_name": "csv-tidy"}, "with_skill", "without_skill", n_boot=50)
    assert bench["delta_stats"]["pass_rate"]["delta"] == 0.5
    assert bench["run_summary"]["with_skill"]["pass_rate"]["mean"] == 0.75
    bench_path.write_text(json.dumps(bench))
    out = tmp_path / "r.html"
    skilleval_cli.run("report", "latest", "-o", str(out), check=0)
    open_offline(page, out)
    run_id = json.loads(skilleval_cli.run("sql", "select run_id from runs", "--format", "json",
                                          check=0).stdout)[0]["run_id"]
    page.page.goto(out.as_uri() + f"#/run/{run_id}/benchmark")
    row = page.page.locator("tr", has=page.page.locator("th", has_text="pass rate")).first
    row.wait_for(timeout=10_000)
    cells = [c.strip() for c in row.locator("td").all_inner_texts()]
    assert cells[0].startswith("0.50") and "pooled 0.75" in cells[0], cells
    assert cells[1].startswith("0.00"), cells
    assert cells[2].startswith("+0.50"), cells
    assert page.errors == []
