"""The trial runner in-process: real Store (Parquet + DuckDB) in tmp_path, real StubBackend."""
from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from skilleval.backends.stub import StubBackend, StubParams
from skilleval.budget import Budget
from skilleval.datasets import load_trigger_cases
from skilleval.domain import Outcome, TriggerCase
from skilleval.errors import BudgetExhausted
from skilleval.skills import load_skill
from skilleval.store.catalog import Store
from skilleval.store.schema import SCHEMA_VERSION
from skilleval.trigger.runner import TrialRunner, TriggerSettings, trial_rows_recorder
from spine_helpers import CSV_DESCRIPTION, EXAMPLES, PDF_DESCRIPTION, SMALL_CASES, write_skill


def cases_of(pairs: list[tuple[str, bool]]) -> list[TriggerCase]:
    return [TriggerCase(f"q{i:03d}", q, s) for i, (q, s) in enumerate(pairs)]


class Harness:
    """A runner wired like a job: trials streamed into `store` under run `run_id`."""

    def __init__(self, root: Path, *, params: StubParams | None = None, budget: Budget | None = None,
                 run_id: str = "run-1", **settings: object) -> None:
        self.store = Store(root, flush_seconds=0.05)
        self.backend = StubBackend(params or StubParams())
        self.run_id = run_id
        writer = self.store.writer("trials", "test", run_id)
        identity = {"run_id": run_id, "sweep_id": run_id, "job_num": 0, "experiment": "test",
                    "schema_version": SCHEMA_VERSION}
        self.runner = TrialRunner(self.backend, settings=TriggerSettings(**settings),  # type: ignore[arg-type]
                                  store=self.store, recorder=trial_rows_recorder(writer, identity, self.backend),
                                  budget=budget)

    def evaluate(self, skill, cases, distractors=()):  # noqa: ANN001, ANN201
        try:
            return asyncio.run(self.runner.evaluate(skill, cases, distractors))
        finally:
            self.store.close()

    def count(self, where: str = "TRUE") -> int:
        return self.store.query(f"select count(*) as n from trials where {where}").to_pylist()[0]["n"]


@pytest.fixture
def skills(tmp_path: Path):  # noqa: ANN201
    csv = load_skill(write_skill(tmp_path / "skills", "csv-tidy", CSV_DESCRIPTION))
    pdf = load_skill(write_skill(tmp_path / "skills", "pdf-form-filler", PDF_DESCRIPTION))
    return csv, pdf


def test_second_evaluate_makes_no_calls(tmp_path: Path, skills) -> None:  # noqa: ANN001
    csv, pdf = skills
    cases = cases_of(SMALL_CASES)
    h = Harness(tmp_path / "store", runs=3, policy="fixed")
    first = h.evaluate(csv, cases, [pdf])
    made = h.runner.calls_made
    assert made == len(cases) * 3 == h.backend.calls == h.count()
    assert all(q.runs == 3 and q.cached == 0 for q in first)

    again = h.evaluate(csv, cases, [pdf])  # same runner: served from memory
    assert h.runner.calls_made == made and h.backend.calls == made
    assert h.runner.calls_cached == made
    assert [q.verdict for q in again] == [q.verdict for q in first]
    assert h.count() == made  # nothing new stored

    # A fresh runner (new process, in effect) reads the trials back from the Parquet store.
    fresh = Harness(tmp_path / "store", run_id="run-2", runs=3, policy="fixed")
    third = fresh.evaluate(csv, cases, [pdf])
    assert fresh.runner.calls_made == 0 and fresh.backend.calls == 0
    assert fresh.runner.calls_cached == made
    assert [(q.triggers, q.valid_runs, q.verdict) for q in third] == \
        [(q.triggers, q.valid_runs, q.verdict) for q in first]
    assert [[r.fired for r in q.results] for q in third] == [[r.fired for r in q.results] for q in first]
    assert fresh.count("run_id = 'run-2'") == 0

    # Changing the description changes the keys: everything is asked again.
    changed = Harness(tmp_path / "store", run_id="run-3", runs=3, policy="fixed")
    changed.evaluate(csv.with_description(CSV_DESCRIPTION + " Also TSV."), cases, [pdf])
    assert changed.runner.calls_made == made


def test_more_runs_reuse_the_first_repeats(tmp_path: Path, skills) -> None:  # noqa: ANN001
    csv, _ = skills
    cases = cases_of(SMALL_CASES)
    Harness(tmp_path / "store", runs=2, policy="fixed").evaluate(csv, cases)
    h = Harness(tmp_path / "store", run_id="run-2", runs=5, policy="fixed")
    h.evaluate(csv, cases)
    assert h.runner.calls_cached == 2 * len(cases)
    assert h.runner.calls_made == 3 * len(cases)
    keys = h.store.query("select count(*) n, count(distinct key) d from trials").to_pylist()[0]
    assert keys["n"] == keys["d"] == 5 * len(cases)


def test_errors_are_their_own_outcome_and_insufficient(tmp_path: Path, skills) -> None:  # noqa: ANN001
    csv, pdf = skills
    cases = cases_of(SMALL_CASES)
    h = Harness(tmp_path / "store", params=StubParams(error_rate=1.0), runs=3, policy="decided")
    results = h.evaluate(csv, cases, [pdf])
    for q in results:
        assert q.runs == 3  # decided cannot settle anything on errors: every run is tried
        assert all(r.outcome is Outcome.ERROR for r in q.results)
        assert q.valid_runs == 0 and q.triggers == 0 and q.errors == 3
        assert q.verdict == "insufficient" and q.passed is None and q.trigger_rate is None
    rows = h.store.query("select outcome, triggered, count(*) n from trials group by all").to_pylist()
    assert rows == [{"outcome": "error", "triggered": False, "n": 3 * len(cases)}]

    # Errors are never cached: a healthy backend asks every one of them again.
    healthy = Harness(tmp_path / "store", run_id="run-2", runs=3, policy="fixed")
    again = healthy.evaluate(csv, cases, [pdf])
    assert healthy.runner.calls_cached == 0 and healthy.runner.calls_made == 3 * len(cases)
    assert all(q.verdict in ("pass", "fail") for q in again)


def test_timeouts_and_partial_errors(tmp_path: Path, skills) -> None:  # noqa: ANN001
    csv, pdf = skills
    cases = cases_of(SMALL_CASES)
    h = Harness(tmp_path / "store", params=StubParams(error_rate=0.3, timeout_rate=0.3, fault_seed=3),
                runs=6, policy="fixed")
    results = h.evaluate(csv, cases, [pdf])
    outcomes = {r.outcome for q in results for r in q.results}
    assert {Outcome.ERROR, Outcome.TIMEOUT} <= outcomes
    for q in results:
        assert q.valid_runs == q.runs - q.errors - q.timeouts
        assert q.triggers <= q.valid_runs
    stored = h.store.query("select outcome, count(*) n from trials group by 1").to_pylist()
    by = {r["outcome"]: r["n"] for r in stored}
    assert by.get("timeout") == sum(q.timeouts for q in results)
    assert by.get("error") == sum(q.errors for q in results)
    assert sum(by.values()) == 6 * len(cases)


def test_distractor_firing_is_recorded(tmp_path: Path, skills) -> None:  # noqa: ANN001
    csv, pdf = skills
    cases = cases_of([("fill in the pdf form fields of tax.pdf and flatten the pdf form", False)])
    h = Harness(tmp_path / "store", runs=10, policy="fixed")
    [q] = h.evaluate(csv, cases, [pdf])
    fired = [r.fired for r in q.results]
    assert "pdf-form-filler" in fired
    for r in q.results:
        if r.fired == "pdf-form-filler":
            assert r.outcome is Outcome.NOT_TRIGGERED  # ours did not fire; a competitor did
    assert q.fired_other == fired.count("pdf-form-filler")
    stored = h.store.query("select fired, outcome, listing from trials where fired = 'pdf-form-filler'").to_pylist()
    assert len(stored) == fired.count("pdf-form-filler")
    assert all(r["outcome"] == "not_triggered" for r in stored)
    assert stored[0]["listing"] == ["csv-tidy", "pdf-form-filler"]


def test_budget_stops_with_partial_results(tmp_path: Path, skills) -> None:  # noqa: ANN001
    csv, pdf = skills
    cases = cases_of(SMALL_CASES)
    budget = Budget(max_calls=5)
    h = Harness(tmp_path / "store", budget=budget, runs=3, policy="fixed", concurrency=2)
    with pytest.raises(BudgetExhausted) as info:
        h.evaluate(csv, cases, [pdf])
    partial = info.value.partial  # type: ignore[attr-defined]
    assert len(partial) == len(cases)
    made = sum(q.runs for q in partial)
    assert made == h.runner.calls_made == budget.calls == 5
    assert h.backend.calls == 5
    assert h.count() == 5  # stored trials == calls made


def test_decided_matches_fixed_on_the_bundled_examples(tmp_path: Path) -> None:
    """Same verdicts as `fixed` end to end (stub, faults included), with fewer calls."""
    for name in ("changelog-writer", "csv-tidy"):
        skill = load_skill(EXAMPLES / name)
        cases = load_trigger_cases(EXAMPLES / name / "evals" / "trigger_eval.json")
        distractors = [load_skill(p) for p in sorted((EXAMPLES / "distractors").iterdir())]
        verdicts = {}
        calls = {}
        for policy in ("fixed", "decided"):
            backend = StubBackend(StubParams(error_rate=0.15))
            runner = TrialRunner(backend, settings=TriggerSettings(runs=5, policy=policy), store=None)
            res = asyncio.run(runner.evaluate(skill, cases, distractors))
            verdicts[policy] = [q.verdict for q in res]
            calls[policy] = runner.calls_made
        assert verdicts["decided"] == verdicts["fixed"], name
        assert calls["decided"] < calls["fixed"] == 5 * len(cases)


def test_stub_is_reproducible_across_backends(tmp_path: Path, skills) -> None:  # noqa: ANN001
    csv, pdf = skills
    cases = cases_of(SMALL_CASES)
    runs = []
    for _ in range(2):
        runner = TrialRunner(StubBackend(StubParams()), settings=TriggerSettings(runs=4, policy="fixed"),
                             store=None)
        runs.append([[dataclasses.replace(r, latency_ms=0.0) for r in q.results]
                     for q in asyncio.run(runner.evaluate(csv, cases, [pdf]))])
    assert runs[0] == runs[1]
