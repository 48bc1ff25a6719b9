"""Audit: the Runs page tells a running run from a killed one by the run's lease.

It guessed from quiet time: a run with no trial for 10 minutes read "interrupted?" (every
functional run, whose executions are not trials, after 10 minutes of honest work), and a run
killed a minute ago still read "running". The store knows (`skilleval sql` shows 'stale')."""
from __future__ import annotations

import signal
import time

from skilleval.store.catalog import Store
from skilleval.viewer.api import Api


def _row(cli) -> dict | None:  # noqa: ANN001
    if not (cli.store / "runs").exists():
        return None
    rows = Api(Store(cli.store)).get("/api/runs")["rows"]
    return rows[0] if rows else None


def _filtered(cli, status: str) -> tuple[list[str], int]:  # noqa: ANN001
    page = Api(Store(cli.store)).get("/api/runs", {"status": status})
    return [r["run_id"] for r in page["rows"]], page["total"]


def test_running_then_killed_is_running_then_stale(skilleval_cli) -> None:  # noqa: ANN001
    with skilleval_cli.spawn("+experiment=trigger_eval", "trigger.runs=20", "backend.latency_ms=200",
                             "trigger.concurrency=2", "progress=false") as proc:
        deadline = time.monotonic() + 60
        row = None
        while time.monotonic() < deadline:
            row = _row(skilleval_cli)
            if row and (skilleval_cli.store / "trials").exists():
                break
            time.sleep(0.3)
        assert row is not None and proc.poll() is None, "the run should still be going"
        assert (row["status"], row["alive"]) == ("running", True)
        assert Api(Store(skilleval_cli.store)).run(row["run_id"])["status"] == "running"
        assert _filtered(skilleval_cli, "running") == ([row["run_id"]], 1)
        assert _filtered(skilleval_cli, "stale") == ([], 0)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    row = _row(skilleval_cli)
    assert (row["status"], row["alive"]) == ("stale", False)
    assert Api(Store(skilleval_cli.store)).run(row["run_id"])["status"] == "stale"
    # the status filter splits the stored 'running' rows as the page shows them
    assert _filtered(skilleval_cli, "stale") == ([row["run_id"]], 1)
    assert _filtered(skilleval_cli, "running") == ([], 0)
