"""Issue 8 item 6: a crash loses at most `store.flush_seconds` of finished trials, including
when rows arrive slowly (a real `kill -9` of a real subprocess, no clock mocking)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow.parquet as pq

from skilleval.sim.process import SimProcess, wait_until
from skilleval.store.catalog import Store

REPO = Path(__file__).resolve().parents[2]
FLUSH_S = 0.3


def _rows(directory: Path) -> int:
    return sum(pq.read_metadata(p).num_rows for p in directory.rglob("*.parquet"))


def test_a_lone_row_reaches_disk_without_another_append(tmp_path: Path) -> None:
    """One row, then silence (a slow claude_cli trial): the old writer only looked at the
    clock inside `append`, so the row waited for a next one that never came."""
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from skilleval.store.writer import PartWriter
        import pyarrow as pa
        schema = pa.schema([("n", pa.int64())])
        w = PartWriter(Path(sys.argv[1]), schema, flush_seconds={FLUSH_S})
        w.append({{"n": 1}})
        print("appended", flush=True)
        time.sleep(600)
    """)
    out = tmp_path / "parts"
    proc = subprocess.Popen([sys.executable, "-c", script, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "appended"
        assert wait_until(lambda: _rows(out) == 1, timeout=10), "the lone row was never flushed"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert _rows(out) == 1


def test_kill_9_mid_run_keeps_every_trial_older_than_flush_seconds(tmp_path: Path, sim: SimProcess,
                                                                     skilleval_cli) -> None:  # noqa: ANN001
    """A real run (anthropic_api against serve-sim, slow answers), killed with SIGKILL: every
    trial the server answered more than a few flush periods before the kill is in the store."""
    sim.configure(latency_ms=120.0)
    args = ["+experiment=trigger_eval", "progress=false", "backend=anthropic_api",
            f"backend.base_url={sim.url}", "backend.model=sim-1", "trigger.self_check=false",
            "trigger.policy=fixed", "trigger.runs=3", "trigger.concurrency=2",
            f"store.flush_seconds={FLUSH_S}", "skill=" + str(REPO / "experiments/csv-tidy")]
    with skilleval_cli.spawn(*args, env={"ANTHROPIC_API_KEY": "sk-ant-test"}) as proc:
        answered = lambda: sim.stats().get("POST /v1/messages", 0)  # noqa: E731
        assert wait_until(lambda: answered() >= 12 or proc.poll() is not None, timeout=120)
        assert proc.poll() is None, f"run ended before the kill: {proc.stderr.read()[-2000:]}"
        done = answered() - 2  # at most `concurrency` of them still in flight
        time.sleep(6 * FLUSH_S)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    stored = _rows(skilleval_cli.store / "trials")
    assert stored >= done, f"{stored} trials stored of at least {done} finished before the kill"
    assert stored < 60, "the kill must land before the end of the run"
    [row] = Store(skilleval_cli.store).query("select count(distinct key) k from trials").to_pylist()
    assert row["k"] == stored
