"""A run stopped before its experiment finished its accounting (Ctrl-C, a failed self-check)
still made paid calls: its `runs` row must say how many and what they cost, not 0 calls and
$0 while the store holds the trials those calls produced."""
from __future__ import annotations

import subprocess
import sys

from shared_helpers import interrupt_once_running, start_interruptible

SLOW = ["+experiment=trigger_eval", "backend.latency_ms=150", "trigger.concurrency=2", "trigger.runs=2",
        "backend.input_usd_per_mtok=1000", "progress_every=0.2"]


def _csv(cli, sql: str) -> list[str]:  # noqa: ANN001
    return cli.run("sql", sql, "--format", "csv", check=0).stdout.split()


def test_interrupted_run_row_counts_the_calls_it_made(skilleval_cli) -> None:  # noqa: ANN001
    proc = start_interruptible([sys.executable, "-m", "skilleval.cli", *SLOW], cwd=skilleval_cli.cwd,
                               env=skilleval_cli.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    seen = interrupt_once_running(proc)
    proc.communicate(timeout=60)
    assert proc.returncode == 130, "".join(seen)
    status, made, cost = _csv(skilleval_cli, "select status, calls_made, cost_usd from runs")[1].split(",")
    rows, paid = _csv(skilleval_cli, "select count(*), sum(cost_usd) from trials_all")[1].split(",")
    assert status == "interrupted"
    assert int(rows) > 0 and float(paid) > 0
    # every stored trial was a call; a call cancelled in flight was started, so may add to it
    assert int(made) >= int(rows), (made, rows)
    assert abs(float(cost) - float(paid)) < 1e-9 * max(1.0, float(paid)), (cost, paid)


def test_an_interrupted_real_backend_run_counts_its_trials_not_only_its_self_check(skilleval_cli) -> None:  # noqa: ANN001
    """A real backend books its self-check (6 calls) in the summary first; a Ctrl-C after 40
    paid trials then stored 6 calls and the self-check's cost as the run's."""
    from skilleval.sim.process import SimProcess

    with SimProcess(latency_ms=150) as sim:
        proc = start_interruptible(
            [sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval", "backend=anthropic_api",
             f"backend.base_url={sim.url}", "backend.model=sim-1", "trigger.runs=3", "backend.concurrency=2",
             "progress_every=0.2"],
            cwd=skilleval_cli.cwd, env=skilleval_cli.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        seen = interrupt_once_running(proc, settle_s=1.5)
        proc.communicate(timeout=60)
    assert proc.returncode == 130, "".join(seen)
    status, made, cost = _csv(skilleval_cli, "select status, calls_made, cost_usd from runs")[1].split(",")
    rows, paid = _csv(skilleval_cli, "select count(*), sum(cost_usd) from trials_all")[1].split(",")
    controls, control_paid = _csv(skilleval_cli, "select count(*), sum(cost_usd) from controls")[1].split(",")
    assert status == "interrupted" and int(rows) > 0 and int(controls) == 6
    assert int(made) >= int(rows) + int(controls), (made, rows, controls)
    total = float(paid) + float(control_paid)
    assert abs(float(cost) - total) < 1e-6 * max(1.0, total), (cost, paid, control_paid)


def test_the_page_of_a_run_interrupted_before_its_verdicts_is_not_live(skilleval_cli) -> None:  # noqa: ANN001
    """Its page said "live: rates so far ... (verdicts come when the run ends)" with every
    verdict "running", for a run that was over, and the trials it had reused from the store
    were silently in none of the rates."""
    from skilleval.store.catalog import Store
    from skilleval.viewer.queries import Queries
    from skilleval.viewer.trigger_data import trigger_page

    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false")  # to reuse
    proc = start_interruptible([sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval",
                                "backend.latency_ms=150", "trigger.concurrency=2", "trigger.runs=3",
                                "progress_every=0.2"], cwd=skilleval_cli.cwd, env=skilleval_cli.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = interrupt_once_running(proc)
    proc.communicate(timeout=60)
    assert proc.returncode == 130, "".join(seen)
    q = Queries(Store(skilleval_cli.store))
    [run] = q.runs_sql("select run_id, calls_cached from runs where status = 'interrupted'")
    page = trigger_page(q, run["run_id"])
    assert not page["live"] and page["ended_early"]
    assert {r["verdict"] for r in page["queries"]} == {"no verdict"}
    assert page["reused_not_counted"] == run["calls_cached"] > 0
    [done] = q.runs_sql("select run_id from runs where status = 'done'")
    finished = trigger_page(q, done["run_id"])
    assert not finished["live"] and not finished["ended_early"] and finished["reused_not_counted"] == 0
