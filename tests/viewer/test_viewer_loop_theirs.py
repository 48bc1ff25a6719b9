"""Audit: an imported skill-creator benchmark.json reads on the Benchmark page as it does in
skill-creator's own viewer: its delta (pooled, no interval, said so) and a per-eval table.
The page showed "n/a" for the delta skill-creator printed as +0.50, and no per-eval rows."""
from __future__ import annotations

import json
from pathlib import Path

from tests.viewer.conftest import open_latest_report


def _stat(x: float) -> dict:
    return {"mean": x, "stddev": 0.0, "min": x, "max": x}


def test_skill_creators_benchmark_json_shows_its_delta_and_per_eval_rows(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    it = tmp_path / "ws" / "iteration-1"
    runs = []
    for cfg, rate in (("with_skill", 1.0), ("without_skill", 0.5)):
        d = it / "eval-0" / cfg / "run-1"
        (d / "outputs").mkdir(parents=True)
        (d / "outputs" / "o.txt").write_text("x")
        (d / "grading.json").write_text(json.dumps({"expectations": [{"text": "t", "passed": True, "evidence": ""}]}))
        runs.append({"eval_id": 0, "configuration": cfg, "run_number": 1, "expectations": [], "notes": [],
                     "result": {"pass_rate": rate, "passed": 1, "failed": 0, "total": 1, "time_seconds": 3.0,
                                "tokens": 100, "tool_calls": 1, "errors": 0}})
    (it / "benchmark.json").write_text(json.dumps({
        "metadata": {"skill_name": "<skill-name>", "runs_per_configuration": 3}, "runs": runs,
        "run_summary": {"with_skill": {m: _stat(v) for m, v in (("pass_rate", 1.0), ("time_seconds", 3.0), ("tokens", 100))},
                        "without_skill": {m: _stat(v) for m, v in (("pass_rate", 0.5), ("time_seconds", 3.0), ("tokens", 100))},
                        "delta": {"pass_rate": "+0.50", "time_seconds": "+0.0", "tokens": "+0"}},
        "notes": []}))
    skilleval_cli.run("import", str(tmp_path / "ws"), check=0)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", link="benchmark", wait_text="Pass rate per eval")
    text = pg.locator("main").inner_text()
    assert "+0.50 (pooled, from the file; no interval)" in text
    per_eval = pg.evaluate("() => [...document.querySelectorAll('main table')[1].querySelectorAll('tbody tr')]"
                           ".map(r => [...r.children].map(td => td.innerText.trim()))")
    assert per_eval == [["0", "100%", "50%", "+0.50"]]
    assert page.errors == []
