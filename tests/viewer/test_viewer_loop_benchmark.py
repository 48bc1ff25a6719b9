"""Audit of the Benchmark page (static report in real chromium): errors and insufficient
arms are said, never drawn as measured.

Found: the page had no per-eval table and no count of errored executions; its bar chart drew
an arm that had too few valid executions of an eval ("insufficient", left out of the delta
by the run) as a measured mean, e.g. 100 % from its one surviving run."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.viewer.conftest import open_latest_report
from skilleval.functional.benchmark import build_benchmark


def _ok(ev: str, arm: str, n: int, rate: float) -> dict[str, Any]:
    return {"eval_id": ev, "eval_name": ev, "configuration": arm, "run_number": n, "status": "ok",
            "result": {"pass_rate": rate, "passed": int(rate * 2), "failed": 2 - int(rate * 2), "total": 2,
                       "time_seconds": 1.0, "tokens": 10, "judge_errors": 0},
            "expectations": [], "skill_fired": None}


def _workspace(root: Path) -> None:
    it = root / "iteration-1"
    runs = [_ok("alpha", "with_skill", 1, 1.0),
            {"eval_id": "alpha", "eval_name": "alpha", "configuration": "with_skill", "run_number": 2,
             "status": "timeout", "error": "timed out", "time_seconds": 0.1, "tokens": 0},
            _ok("alpha", "without_skill", 1, 0.5), _ok("alpha", "without_skill", 2, 0.5),
            _ok("beta", "with_skill", 1, 1.0), _ok("beta", "with_skill", 2, 0.5),
            _ok("beta", "without_skill", 1, 0.0), _ok("beta", "without_skill", 2, 0.5)]
    for r in runs:
        d = it / f"eval-{r['eval_name']}" / r["configuration"] / f"run-{r['run_number']}"
        (d / "outputs").mkdir(parents=True)
        (d / "outputs" / "out.txt").write_text("x")
        if r["status"] == "ok":
            (d / "grading.json").write_text(json.dumps({"expectations": [
                {"text": "e", "passed": True, "evidence": ""}]}))
        else:
            (d / "execution_error.json").write_text(json.dumps({"status": "timeout", "error": "timed out",
                                                                 "graded": False}))
    b = build_benchmark(runs, {"skill_name": "s"}, "with_skill", "without_skill", n_boot=50, min_valid=2)
    assert b["per_eval"][0]["with_skill"]["insufficient"]
    (it / "benchmark.json").write_text(json.dumps(b))


def test_benchmark_page_says_errors_and_insufficient_and_does_not_draw_them(
        skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    ws = tmp_path / "ws"
    _workspace(ws)
    skilleval_cli.run("import", str(ws), check=0)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", link="benchmark", wait_text="Pass rate per eval")
    text = pg.locator("main").inner_text()
    assert "insufficient: 1 valid (1 errored or timed out)" in text
    assert "errored / timed out (in no number)" in text and "0 / 1" in text
    data = pg.evaluate("() => Chart.getChart(document.querySelector('main canvas')).data.datasets"
                       ".map(d => [d.label, d.data])")
    assert data == [["with_skill", [None, 0.75]], ["without_skill", [0.5, 0.25]]]
    assert page.errors == [] and page.blocked == []
