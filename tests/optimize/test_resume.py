"""kill -9 in the middle of the loop, run the same command again: it continues from the last
finished iteration and repeats none of them."""
from __future__ import annotations

import os
import signal
import time

from opt_helpers import Cli

CMD = ("+experiment=trigger_opt", "backend.latency_ms=60", "optimize.patience=5",
       "optimize.max_iterations=4")


def _finished_iterations(cli: Cli) -> list[dict]:
    if not (cli.store / "candidates").exists():
        return []
    return cli.sql("select run_id, iteration from candidates where role = 'iteration' order by ts")


def test_killed_run_resumes_without_repeating_iterations(cli, tmp_path):
    proc = cli.popen(*CMD)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = _finished_iterations(cli)
        if any(r["iteration"] >= 1 for r in done):
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = _finished_iterations(cli)
    assert first and max(r["iteration"] for r in first) < 4, "killed too late to test resume"
    last_done = max(r["iteration"] for r in first)

    out = cli.run(*CMD)
    assert out.returncode == 0, out.stderr
    assert f"continuing with iteration {last_done + 1}" in out.stderr
    rows = _finished_iterations(cli)
    second = [r for r in rows if r["run_id"] != first[0]["run_id"]]
    assert second and min(r["iteration"] for r in second) == last_done + 1
    assert len({r["iteration"] for r in rows}) == len(rows)  # no iteration finished twice
    res = cli.results()[-1]
    assert len(res["runs"]) == 2 and res["iterations_run"] >= last_done + 1
    # the killed run's spend, up to its last checkpoint, is in the totals over both runs (they
    # were this run's alone: the state was checkpointed before the run added its spend)
    killed = first[0]["run_id"]
    [row] = cli.sql(f"select count(*) as n from trials where run_id = '{killed}' and ts <= "
                    f"(select max(ts) from candidates where run_id = '{killed}' and role = 'iteration')")
    assert row["n"] > 0 and res["calls_all_runs"] - res["calls"] >= row["n"], (row, res["calls_all_runs"], res["calls"])

    # The same loop uninterrupted (trials come from the cache) ends with the same answer.
    fresh = Cli(tmp_path / "fresh")
    fresh.store.mkdir(parents=True)
    fresh.env["SKILLEVAL_STORE"] = str(cli.store)
    fresh.env["SKILLEVAL_OUTPUTS"] = str(fresh.outputs)
    again = fresh.run(*CMD, "optimize.resume=false")
    assert again.returncode == 0, again.stderr
    assert fresh.results()[-1]["best_description"] == res["best_description"]
