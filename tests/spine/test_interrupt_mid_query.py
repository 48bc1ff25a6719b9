"""A Ctrl-C that lands while DuckDB runs a query is a Ctrl-C: exit 130 and one line.

DuckDB turns the pending SIGINT into its own exception (InterruptException, or
RuntimeError('Query interrupted')) and the KeyboardInterrupt is gone: a run interrupted during
a store read showed a traceback, exited 1 and was stored as ``failed``."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import duckdb
import psutil
from shared_helpers import start_interruptible

from skilleval.interrupts import caused_by_interrupt

LONG_QUERY = "select count(*) from range(100000000000) t(x) where x % 7 = 3"


def test_duckdbs_own_interrupt_is_recognised() -> None:
    con = duckdb.connect()
    threading.Timer(0.3, con.interrupt).start()
    try:
        con.sql(LONG_QUERY).fetchall()
    except Exception as exc:  # noqa: BLE001 - the very exception DuckDB raises
        caught = exc
    assert caused_by_interrupt(caught)
    assert not caused_by_interrupt(RuntimeError("something else"))
    assert not caused_by_interrupt(ValueError("Query interrupted"))


def test_ctrl_c_during_sql_exits_130_with_one_line(skilleval_cli) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false", check=0)
    env = {**skilleval_cli.env, "PYTHONUNBUFFERED": "1"}
    proc = start_interruptible([sys.executable, "-m", "skilleval.cli", "sql", LONG_QUERY],
                               cwd=skilleval_cli.cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        # the interpreter and the store's views take about 1 s of CPU; the query then burns
        # CPU until stopped: wait for CPU time, not wall time (a loaded machine starts slowly)
        deadline = time.monotonic() + 60
        while psutil.Process(proc.pid).cpu_times().user < 3.0:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # never leave a query burning the CPUs after a failure
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert [ln for ln in err.splitlines() if ln.strip()] == [
        "skilleval: interrupted (Ctrl-C); finished work is kept in the store and a rerun reuses it"]
