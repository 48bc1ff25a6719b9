"""Item 7: counts that hid work. Broken CLI streams are counted as retries; self-check calls are
in "calls made" and cost; two identical runs started together share trials (no key paid twice,
no key twice in a view); a killed run shows as `stale`."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from skilleval.store.catalog import Store

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "experiments" / "csv-tidy"


def _sql(cli, query: str) -> list[dict]:
    r = cli.run("sql", query, "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _popen(cli, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "skilleval.cli", *args], cwd=cli.cwd, env=cli.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_identical_concurrent_runs_share_trials(skilleval_cli) -> None:
    args = ("+experiment=trigger_eval", "backend=stub", "backend.latency_ms=40", f"skill={SKILL}",
            "trigger.runs=3", "trigger.policy=fixed", "trigger.concurrency=4")
    procs = [_popen(skilleval_cli, *args) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    made = [json.loads(r.read_text())["calls"]["made"] for r in skilleval_cli.results()]
    row, view = _sql(skilleval_cli, "select 'all' as v, count(*) as n, count(distinct key) as k "
                     "from trials_all union all select 'view', count(*), count(distinct key) "
                     "from trials order by v")
    assert row["n"] == row["k"], f"a trial was paid twice: {row}"
    assert sum(made) == row["k"] and sorted(made)[0] == 0, made
    assert view["n"] == view["k"]


def test_views_show_each_key_once_even_when_written_twice(skilleval_cli) -> None:
    """Errors are retried on the next run and written again under the same key."""
    args = ("+experiment=trigger_eval", "backend=stub", f"skill={SKILL}", "trigger.runs=1",
            "trigger.max_error_rate=1")
    skilleval_cli.run(*args, "backend.error_rate=0.5", "backend.max_retries=0", check=0)
    skilleval_cli.run(*args, check=0)
    raw, view = _sql(skilleval_cli, "select 'all' as v, count(*) as n, count(distinct key) as k, "
                     "null as e from trials_all union all select 'view', count(*), count(distinct key), "
                     "count(*) filter (where outcome = 'error') from trials order by v")
    assert raw["n"] > raw["k"]  # the fixture really wrote some keys twice
    assert view["n"] == view["k"] == raw["k"] and view["e"] == 0


def test_killed_run_shows_as_stale(skilleval_cli) -> None:
    p = _popen(skilleval_cli, "+experiment=trigger_eval", "backend=stub", "backend.latency_ms=2000",
               f"skill={SKILL}", "trigger.runs=1", "trigger.concurrency=1")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # polled in-process: a `sql` process per poll costs ~1 s
            if (skilleval_cli.store / "runs").exists() and Store(skilleval_cli.store).query(
                    "select status from runs").to_pylist() == [{"status": "running"}]:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the run never showed as running")
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.communicate(timeout=30)
    assert _sql(skilleval_cli, "select status from runs") == [{"status": "stale"}]
    r = skilleval_cli.run("store", "check")
    assert r.returncode == 1 and "stale run" in r.stdout


def _cases(tmp: Path) -> Path:
    p = tmp / "cases.json"
    p.write_text(json.dumps([{"query": "tidy this messy csv file and dedupe the rows", "should_trigger": True},
                             {"query": "what is the capital of France?", "should_trigger": False}]))
    return p


def test_self_check_calls_are_counted(make_skilleval_cli, tmp_path: Path, sim) -> None:
    from skilleval.trigger.selfcheck import REPEATS

    cli = make_skilleval_cli(tmp_path)
    r = cli.run("+experiment=trigger_eval", "backend=anthropic_api", f"backend.base_url={sim.url}",
                "backend.model=sim-1", f"skill={SKILL}", f"cases={_cases(tmp_path)}", "trigger.runs=2",
                "trigger.policy=fixed", check=0)
    result = json.loads(cli.results()[-1].read_text())
    trials = _sql(cli, "select count(*) as n from trials_all")[0]["n"]
    assert result["calls"]["made"] == trials + 2 * REPEATS, (result["calls"], trials)
    assert sim.stats()["POST /v1/messages"] == result["calls"]["made"]
    runs = _sql(cli, "select calls_made from runs")
    assert runs == [{"calls_made": trials + 2 * REPEATS}]
    assert f"backend calls: {trials + 2 * REPEATS} new" in r.stdout


def test_claude_cli_broken_streams_are_counted_as_retries(make_skilleval_cli, tmp_path: Path, sim,
                                                         claude_bin: str) -> None:
    cli = make_skilleval_cli(tmp_path)
    sim.configure(fail_next=[200, 200, -1])  # two mid-stream errors and one dropped stream
    cli.run("+experiment=trigger_eval", "backend=claude_cli", f"backend.executable={claude_bin}",
            f"backend.base_url={sim.url}", "backend.model=sim-1", f"skill={SKILL}",
            f"cases={_cases(tmp_path)}", "trigger.runs=2", "trigger.policy=fixed",
            "trigger.self_check=false", "trigger.concurrency=2", check=0, timeout=300)
    stats = sim.stats()
    faults = stats.get("fault_stream_error", 0) + stats.get("fault_-1", 0)
    assert faults == 3, stats
    row = _sql(cli, "select sum(retries) as r, count(*) filter (where outcome = 'error') as e from trials")[0]
    assert row["e"] == 0 and row["r"] == faults, (row, stats)
