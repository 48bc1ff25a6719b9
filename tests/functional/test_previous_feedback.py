"""The next iteration reads back the feedback given on the previous one.

Found: feedback typed in the viewer landed in ``iteration-N/feedback.json`` and nothing after
it read it: the next ``functional_eval`` printed its numbers with no word of what the reviewer
had asked for. Now ``benchmark.json`` / ``benchmark.md`` of iteration N+1 carry the non-empty
reviews of iteration N (escaped: they are typed text, and the analyzer's notes are model
output), and the console says how many runs were commented."""
from __future__ import annotations

import json
from pathlib import Path

HOSTILE = "legend missing <img src=x onerror=alert(1)> | *not bold* [link](javascript:x)"


def _run(cli, ws: Path):  # noqa: ANN001, ANN202
    return cli.run("+experiment=functional_eval", "functional.runs=1", "functional.analyze=false",
                   "functional.only=[1]", f"functional.workspace={ws}", "progress=false",
                   check=0, timeout=300)


def test_reviews_of_the_previous_iteration_reach_the_next_benchmark(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    ws = tmp_path / "ws"
    first = _run(skilleval_cli, ws)
    assert "feedback on" not in first.stderr  # iteration-1 has nothing before it
    runs = sorted(p.parent.relative_to(ws / "iteration-1").as_posix().replace("/", "-")
                  for p in (ws / "iteration-1").rglob("run-1/outputs"))
    assert len(runs) == 2, runs
    (ws / "iteration-1" / "feedback.json").write_text(json.dumps({"reviews": [
        {"run_id": runs[0], "feedback": HOSTILE, "timestamp": "2026-12-01T00:00:00Z"},
        {"run_id": runs[1], "feedback": "", "timestamp": "2026-12-01T00:00:00Z"}],
        "status": "complete"}), encoding="utf-8")

    second = _run(skilleval_cli, ws)
    assert "feedback on iteration-1 (complete): 1 run(s) commented" in second.stderr, second.stderr
    bench = json.loads((ws / "iteration-2" / "benchmark.json").read_text(encoding="utf-8"))
    assert bench["previous_feedback"] == {"iteration": "iteration-1", "status": "complete",
                                          "reviews": {runs[0]: HOSTILE}}
    md = (ws / "iteration-2" / "benchmark.md").read_text(encoding="utf-8")
    assert "## Feedback on iteration-1 (complete)" in md
    line = next(ln for ln in md.splitlines() if "legend missing" in ln)
    assert "<img" not in line and "&lt;img" in line and r"\*not bold\*" in line and r"\|" in line
    assert runs[1] not in md  # "" means the run looked fine: not listed

    third = _run(skilleval_cli, ws)  # nobody reviewed iteration-2
    assert "feedback on" not in third.stderr
    assert "previous_feedback" not in json.loads((ws / "iteration-3" / "benchmark.json").read_text())
