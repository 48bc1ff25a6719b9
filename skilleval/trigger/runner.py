"""The trial runner: plans trials per query, reads cached ones, runs the rest concurrently.

Concurrency is one semaphore over backend calls. Each query is a small coroutine that asks
its policy how many runs to start, starts them together, and repeats. Finished trials are
streamed to the store as they complete (a crash loses at most the writer's last second),
and a trial already in the store under the same content-addressed key is never paid for
again. Only valid outcomes are reused: an error or timeout is retried by the next run.
"""
from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from skilleval.backends.base import Backend
from skilleval.budget import Budget
from skilleval.domain import ListedSkill, Outcome, Skill, Trial, TrialResult, TriggerCase
from skilleval.errors import BudgetExhausted
from skilleval.store import keys as keymod
from skilleval.store.catalog import Store
from skilleval.store.writer import PartWriter
from skilleval.trigger.policies import POLICIES, TriggerSettings, max_runs, verdict

__all__ = ["QueryResult", "TrialRunner", "TriggerSettings"]


@dataclass
class QueryResult:
    """A query's trials in repeat order, and what they add up to."""

    case: TriggerCase
    target: str
    settings: TriggerSettings
    results: list[TrialResult] = field(default_factory=list)
    cached: int = 0

    @property
    def runs(self) -> int:
        return len(self.results)

    @property
    def valid_runs(self) -> int:
        return sum(1 for r in self.results if r.outcome.valid)

    @property
    def triggers(self) -> int:
        return sum(1 for r in self.results if r.outcome is Outcome.TRIGGERED)

    @property
    def errors(self) -> int:
        return sum(1 for r in self.results if r.outcome is Outcome.ERROR)

    @property
    def timeouts(self) -> int:
        return sum(1 for r in self.results if r.outcome is Outcome.TIMEOUT)

    @property
    def fired_other(self) -> int:
        """Valid runs where another listed skill fired instead of ours."""
        return sum(1 for r in self.results if r.outcome.valid and r.fired not in (None, self.target))

    @property
    def trigger_rate(self) -> float | None:
        v = self.valid_runs
        return self.triggers / v if v else None

    @property
    def verdict(self) -> str:
        return verdict(self.triggers, self.valid_runs, self.case.should_trigger, self.settings)

    @property
    def passed(self) -> bool | None:
        v = self.verdict
        return None if v == "insufficient" else v == "pass"


Recorder = Callable[[Trial, TrialResult, TriggerCase, Skill], None]


class TrialRunner:
    """Runs trigger trials for one backend; reusable across many `evaluate` calls."""

    def __init__(self, backend: Backend, *, settings: TriggerSettings, store: Store | None,
                 recorder: Recorder | None = None, budget: Budget | None = None,
                 progress: Any = None) -> None:
        if settings.policy not in POLICIES:
            from skilleval.errors import UserError

            raise UserError(f"unknown trigger.policy {settings.policy!r}; valid: {', '.join(POLICIES)}")
        self.backend = backend
        self.settings = settings
        self.store = store
        self.recorder = recorder
        self.budget = budget
        self.progress = progress
        self.calls_made = 0
        self.calls_cached = 0
        self.cost_usd = 0.0
        self._identity = keymod.identity_digest(backend.identity())
        self._memo: dict[str, TrialResult] = {}
        self._semaphore = asyncio.Semaphore(max(1, settings.concurrency))
        self._budget_stop: BudgetExhausted | None = None

    # -- planning -----------------------------------------------------------------------

    def plan(self, skill: Skill, cases: Sequence[TriggerCase], distractors: Sequence[Skill] = ()
             ) -> tuple[tuple[ListedSkill, ...], tuple[tuple[str, str], ...], list[list[Trial]]]:
        skills = sorted([skill, *distractors], key=lambda s: s.name)
        listing = tuple(s.listed for s in skills)
        bodies = tuple((s.name, s.body) for s in skills)
        ldigest = keymod.listing_digest(listing, bodies)
        n = max_runs(self.settings)
        trials = [[Trial(keymod.trial_key(self._identity, ldigest, skill.name, c.query, r), c.id,
                         c.query, skill.name, listing, r, self.backend.model, bodies)
                   for r in range(n)] for c in cases]
        return listing, bodies, trials

    def max_calls(self, n_cases: int) -> int:
        return n_cases * max_runs(self.settings)

    def _load_cached(self, trials: list[list[Trial]]) -> None:
        wanted = [t.key for per_case in trials for t in per_case if t.key not in self._memo]
        if not wanted or self.store is None:
            return
        table = self.store.lookup("trials", "key", wanted,
                                  where="t.outcome IN ('triggered', 'not_triggered')")
        if table.num_rows == 0:
            return
        for row in table.to_pylist():
            self._memo[row["key"]] = TrialResult(
                key=row["key"], outcome=Outcome(row["outcome"]), fired=row["fired"],
                position=row["position"], latency_ms=row["latency_ms"] or 0.0,
                input_tokens=row["input_tokens"] or 0, output_tokens=row["output_tokens"] or 0,
                cache_read_tokens=row["cache_read_tokens"] or 0,
                cache_write_tokens=row["cache_write_tokens"] or 0, cost_usd=row["cost_usd"] or 0.0,
                retries=row["retries"] or 0, error=row["error"], backend_version=row["backend_version"],
                shown=tuple(row["shown"]) if row["shown"] is not None else None)

    # -- running ------------------------------------------------------------------------

    async def evaluate(self, skill: Skill, cases: Sequence[TriggerCase],
                       distractors: Sequence[Skill] = (), *, label: str = "") -> list[QueryResult]:
        """Evaluate `skill` (with its current description) on `cases`.

        Raises `BudgetExhausted` (carrying ``.partial``, the results so far) when the budget
        ran out; trials already in flight finish and are stored first.
        """
        _, _, trials = self.plan(skill, cases, distractors)
        self._load_cached(trials)
        task = self.progress.add_task(label or skill.name, total=len(cases)) if self.progress else None
        results = [QueryResult(c, skill.name, self.settings) for c in cases]
        await asyncio.gather(*(self._run_query(q, per_case, skill, task)
                               for q, per_case in zip(results, trials)))
        if task is not None:
            self.progress.remove_task(task)
        if self._budget_stop is not None:
            stop, self._budget_stop = self._budget_stop, None
            stop.partial = results  # type: ignore[attr-defined]
            raise stop
        return results

    async def _run_query(self, q: QueryResult, trials: list[Trial], skill: Skill, task: Any) -> None:
        policy = POLICIES[self.settings.policy]
        should = q.case.should_trigger
        while self._budget_stop is None:
            n = policy(q.triggers, q.valid_runs, q.runs, should, self.settings)
            if n <= 0:
                break
            batch = trials[q.runs:q.runs + n]
            if len(batch) == 1:
                got = [await self._one(batch[0], q, skill)]
            else:
                got = await asyncio.gather(*(self._one(t, q, skill) for t in batch))
            done = [r for r in got if r is not None]
            q.results.extend(done)
            if len(done) < len(batch):
                break
        if task is not None:
            self.progress.advance(task)

    async def _one(self, trial: Trial, q: QueryResult, skill: Skill) -> TrialResult | None:
        cached = self._memo.get(trial.key)
        if cached is not None:
            self.calls_cached += 1
            q.cached += 1
            return cached
        if self.budget is not None:
            try:
                self.budget.reserve()
            except BudgetExhausted as exc:
                self._budget_stop = exc
                return None
        async with self._semaphore:
            try:
                result = await self.backend.run_trial(trial)
            except Exception as exc:  # a backend bug must not be scored as "not triggered"
                result = TrialResult(trial.key, Outcome.ERROR,
                                     error=f"{type(exc).__name__}: {exc}"[:500])
        self.calls_made += 1
        self.cost_usd += result.cost_usd
        if self.budget is not None:
            self.budget.charge_usd(result.cost_usd)
        if result.outcome.valid:
            self._memo[trial.key] = result
        if self.recorder is not None:
            self.recorder(trial, result, q.case, skill)
        return result


def trial_rows_recorder(writer: PartWriter, identity: dict[str, Any], backend: Backend) -> Recorder:
    """A recorder that streams one `trials` row per backend call into `writer`."""
    utc = dt.timezone.utc

    def record(trial: Trial, r: TrialResult, case: TriggerCase, skill: Skill) -> None:
        writer.write([{
            **identity, "ts": dt.datetime.now(utc), "key": trial.key, "backend": backend.name,
            "model": trial.model, "skill": trial.target, "description": skill.description,
            "listing": [s.name for s in trial.listing], "case_id": case.id, "query": trial.query,
            "should_trigger": case.should_trigger, "repeat": trial.repeat,
            "outcome": r.outcome.value, "triggered": r.outcome is Outcome.TRIGGERED,
            "fired": r.fired, "position": r.position, "latency_ms": r.latency_ms,
            "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
            "cache_read_tokens": r.cache_read_tokens, "cache_write_tokens": r.cache_write_tokens,
            "cost_usd": r.cost_usd, "retries": r.retries, "error": r.error,
            "backend_version": r.backend_version,
            "shown": list(r.shown) if r.shown is not None else None,
        }])

    return record
