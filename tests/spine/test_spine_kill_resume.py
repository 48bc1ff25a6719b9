"""`kill -9` during a long stub run, then the same command: no duplicate, no missing trial keys."""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from spine_helpers import CSV_DESCRIPTION, write_skill

from skilleval.store.catalog import Store

N_QUERIES, RUNS = 150, 3
WORDS = ["csv", "export", "headers", "dedupe", "quoting", "pdf", "form", "poem", "invoice", "tsv",
         "encoding", "rows", "merge", "slides", "budget", "release", "notes", "weather", "recipe", "sql"]


def make_cases(path: Path) -> None:
    lines = []
    for i in range(N_QUERIES):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(4)]
        lines.append(json.dumps({"query": f"request {i}: please {' '.join(words)}",
                                 "should_trigger": i % 2 == 0}))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.timeout(240)
def test_kill_9_then_resume(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    skill = write_skill(tmp_path, "csv-tidy", CSV_DESCRIPTION)
    cases = tmp_path / "long.jsonl"
    make_cases(cases)
    args = ["+experiment=trigger_eval", "progress=false", f"skill={skill}", f"cases={cases}",
            "backend.latency_ms=30", "trigger.concurrency=4", "trigger.policy=fixed",
            f"trigger.runs={RUNS}", "store.flush_seconds=0.2"]
    # ideal duration: 450 trials x 30 ms / 4 = 3.4 s after start-up
    trials_dir = skilleval_cli.store / "trials"
    with skilleval_cli.spawn(*args) as proc:
        deadline = time.monotonic() + 120
        while not any(trials_dir.rglob("*.parquet")):
            assert proc.poll() is None, f"run ended before any part was written: {proc.stderr.read()}"
            assert time.monotonic() < deadline, "no trial part appeared"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    store = Store(skilleval_cli.store)
    [before] = store.query("select count(*) n, count(distinct key) k from trials").to_pylist()
    total = N_QUERIES * RUNS
    assert 0 < before["n"] < total, "the kill must land half way"
    assert before["n"] == before["k"]
    [killed] = store.query("select run_id, status from runs").to_pylist()
    assert killed["status"] == "stale"  # it never got to say otherwise; its liveness lease died with it

    r = skilleval_cli.run(*args, timeout=180, check=0)
    assert "Traceback" not in r.stderr

    [after] = store.query("select count(*) n, count(distinct key) k, "
                          "count(distinct (query, repeat)) qr, count(distinct query) q from trials").to_pylist()
    assert after["n"] == after["k"], "duplicate trial keys after resume"
    assert after["k"] == total and after["qr"] == total and after["q"] == N_QUERIES
    bad = store.query("select count(*) n from trials "
                      "where outcome not in ('triggered', 'not_triggered') or repeat not in (0, 1, 2)").to_pylist()
    assert bad == [{"n": 0}]
    runs = {x["run_id"]: x for x in store.query(
        "select run_id, status, calls_made, calls_cached from runs").to_pylist()}
    resumed = next(x for rid, x in runs.items() if rid != killed["run_id"])
    assert resumed["status"] == "done"
    # the resumed run paid only for what the killed one had not stored, and redid nothing
    assert resumed["calls_cached"] == before["n"]
    assert resumed["calls_made"] == total - before["n"]
    [mine] = store.query("select count(*) n from trials where run_id = ?", [resumed["run_id"]]).to_pylist()
    assert mine["n"] == resumed["calls_made"]
    [data] = [json.loads(p.read_text()) for p in skilleval_cli.results()]
    assert data["summary"]["total"] == N_QUERIES
    assert all(x["runs"] == RUNS for x in data["results"])
