"""Audit: an imported skill-creator benchmark.json reads on the Benchmark page as it does in
skill-creator's own viewer: its delta (pooled, no interval, said so) and a per-eval table.
The page showed "n/a" for the delta skill-creator printed as +0.50, and no per-eval rows.
skill-creator subtracts its configs in folder order, so for old_skill / with_skill its file says
-0.50 where the skill gained +0.50: the page took the first config as primary and showed that."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.viewer.conftest import open_latest_report


def _stat(x: float) -> dict:
    return {"mean": x, "stddev": 0.0, "min": x, "max": x}


@pytest.mark.parametrize("configs, file_delta, shown, per_eval_row", [
    (("with_skill", "without_skill"), "+0.50", "+0.50 (pooled means; no interval)", ["0", "100%", "50%", "+0.50"]),
    (("old_skill", "with_skill"), "-0.50",
     "+0.50 (pooled means; no interval) · the file says -0.50: skill-creator subtracts in folder order",
     ["0", "50%", "100%", "+0.50"])])
def test_skill_creators_benchmark_json_shows_its_delta_and_per_eval_rows(
        skilleval_cli, tmp_path: Path, page, configs, file_delta, shown, per_eval_row) -> None:  # noqa: ANN001
    it = tmp_path / "ws" / "iteration-1"
    runs = []
    rates = {"with_skill": 1.0, "without_skill": 0.5, "old_skill": 0.5}
    for cfg, rate in ((c, rates[c]) for c in configs):
        d = it / "eval-0" / cfg / "run-1"
        (d / "outputs").mkdir(parents=True)
        (d / "outputs" / "o.txt").write_text("x")
        (d / "grading.json").write_text(json.dumps({"expectations": [{"text": "t", "passed": True, "evidence": ""}]}))
        runs.append({"eval_id": 0, "configuration": cfg, "run_number": 1, "expectations": [], "notes": [],
                     "result": {"pass_rate": rate, "passed": 1, "failed": 0, "total": 1, "time_seconds": 3.0,
                                "tokens": 100, "tool_calls": 1, "errors": 0}})
    (it / "benchmark.json").write_text(json.dumps({
        "metadata": {"skill_name": "<skill-name>", "runs_per_configuration": 3}, "runs": runs,
        "run_summary": {**{c: {m: _stat(v) for m, v in (("pass_rate", rates[c]), ("time_seconds", 3.0), ("tokens", 100))}
                           for c in configs},
                        "delta": {"pass_rate": file_delta, "time_seconds": "+0.0", "tokens": "+0"}},
        "notes": []}))
    skilleval_cli.run("import", str(tmp_path / "ws"), check=0)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", link="benchmark", wait_text="Pass rate per eval")
    text = pg.locator("main").inner_text()
    assert shown in text, text
    per_eval = pg.evaluate("() => [...document.querySelectorAll('main table')[1].querySelectorAll('tbody tr')]"
                           ".map(r => [...r.children].map(td => td.innerText.trim()))")
    assert per_eval == [per_eval_row]
    assert page.errors == []
