"""`executor=ray`: trials as Ray tasks on a local Ray with 2 worker CPUs. Same verdicts and
trial count as `local`; a worker killed mid-trial is retried with no duplicate row and no
trial answered twice."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import ray  # a missing `ray` extra fails here, loudly

from skilleval.backends.stub import StubBackend, StubParams
from skilleval.datasets import default_cases_path, load_trigger_cases
from skilleval.domain import Skill, TriggerCase
from skilleval.executors.ray_executor import RayExecutor
from skilleval.executors.ray_params import RayParams
from skilleval.skills import load_skill
from skilleval.store.catalog import Store
from skilleval.trigger.policies import TriggerSettings
from skilleval.trigger.runner import TrialRunner, trial_rows_recorder

EXP = ["+experiment=trigger_eval", "progress=false"]
QUERIES = "select case_id, verdict, runs, valid_runs, triggers from queries order by case_id"


@pytest.fixture(scope="module")
def ray_address():
    """One local Ray (2 CPUs) for the module; CLI subprocesses join it by address."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def _sql(cli, query: str) -> list[dict]:
    return json.loads(cli.run("sql", query, "--format", "json", check=0).stdout)


def test_executor_ray_gives_the_stubs_exact_verdicts_and_trial_count(ray_address,
                                                                     make_skilleval_cli, tmp_path):
    local, remote = make_skilleval_cli(tmp_path / "local"), make_skilleval_cli(tmp_path / "ray")
    local.run(*EXP, check=0)
    remote.run(*EXP, "executor=ray", f"executor.address={ray_address}", timeout=180, check=0)
    assert _sql(remote, QUERIES) == _sql(local, QUERIES)
    count = "select count(*) n, count(distinct key) k from trials"
    assert _sql(remote, count) == _sql(local, count)
    assert _sql(remote, count)[0]["n"] == _sql(remote, count)[0]["k"] > 0
    assert json.loads(remote.results()[-1].read_text())["calls"]["made"] == _sql(remote, count)[0]["n"]


def _cases(n: int) -> tuple[Skill, list[TriggerCase]]:
    skill = load_skill(Path(__file__).resolve().parents[2] / "experiments" / "changelog-writer")
    return skill, load_trigger_cases(default_cases_path(skill.path))[:n]


def _evaluate(runner: TrialRunner, skill, cases):
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(runner.evaluate(skill, cases))
    finally:
        loop.close()


def test_a_killed_worker_is_retried_with_no_duplicate_row_and_no_trial_paid_twice(ray_address,
                                                                                 tmp_path):
    skill, cases = _cases(6)
    settings = TriggerSettings(runs=1, threshold=0.5, policy="fixed", max_runs=1, min_valid=1,
                               concurrency=2, confidence=0.95)
    params = StubParams(latency_ms=600.0)
    backend = StubBackend(params)
    executor = RayExecutor(RayParams(max_retries=3))
    executor.start(backend, {"name": "stub", "latency_ms": 600.0})
    store = Store(tmp_path / "store")
    writer = store.writer("trials", "t", "run1")
    identity = {"run_id": "run1", "sweep_id": "s", "job_num": 0, "experiment": "t",
                "schema_version": 1}
    runner = TrialRunner(backend, settings=settings, store=store, executor=executor,
                         recorder=trial_rows_recorder(writer, identity, backend))
    killed: list[tuple[str, int]] = []

    def kill_one() -> None:  # kill the worker process of the first trial seen in flight
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            running = executor.in_flight()
            if running:
                key, pid = next(iter(running.items()))
                os.kill(pid, signal.SIGKILL)
                killed.append((key, pid))
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_one)
    killer.start()
    results = _evaluate(runner, skill, cases)
    killer.join()
    writer.close()
    # the same cache as every executor: asked again, nothing is sent to Ray
    again = TrialRunner(backend, settings=settings, store=store, executor=executor)
    _evaluate(again, skill, cases)
    assert again.calls_made == 0 and again.calls_cached == len(cases)
    assert killed, "no trial was seen in flight, nothing was killed"
    stats = executor.ledger_stats()
    asyncio.run(executor.aclose())
    key = killed[0][0]
    assert stats["begun"][key] == 2  # the killed trial ran again, on another worker
    assert set(stats["answered"].values()) == {1}  # every trial answered exactly once
    assert len(stats["answered"]) == len(cases)
    rows = store.query("select key, count(*) n from trials group by key").to_pylist()
    assert len(rows) == len(cases) and {r["n"] for r in rows} == {1}
    assert all(q.errors == 0 and q.valid_runs == 1 for q in results)

    # the same verdicts as the local executor
    local = TrialRunner(StubBackend(params), settings=settings, store=None)
    assert [q.verdict for q in _evaluate(local, skill, cases)] == [q.verdict for q in results]


def test_a_retry_after_the_answer_arrived_returns_it_without_calling_again(ray_address):
    """The window a kill can hit after the backend answered (before the task returned): the
    retried task finds the answer in the job's ledger and does not pay for it again."""
    from skilleval.domain import ListedSkill, Outcome, Trial, TrialResult
    from skilleval.executors.ray_executor import TrialLedger, run_trial_task

    ledger = TrialLedger.remote()
    trial = Trial("k1", "q0", "some query", "a", (ListedSkill("a", "desc"),), 0, "sim-1")
    answer = TrialResult("k1", Outcome.TRIGGERED, fired="a")
    ray.get(ledger.finish.remote("k1", answer))
    task = ray.remote(run_trial_task).options(num_cpus=1)
    assert ray.get(task.remote({"name": "stub"}, trial, ledger)) == answer
    assert ray.get(ledger.stats.remote()) == {"begun": {}, "answered": {"k1": 1}}
    ray.kill(ledger)


def test_an_address_nobody_answers_on_is_exit_2_at_once(skilleval_cli):
    proc = skilleval_cli.run(*EXP, "executor=ray", "executor.address=127.0.0.1:9", timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Ray cluster answers there" in lines[0], lines
    assert not skilleval_cli.store.exists()  # rejected before the run was even recorded
