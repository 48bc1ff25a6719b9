"""The trial runner: plans trials per query, reads cached ones, runs the rest concurrently.

Concurrency is one semaphore over backend calls. Each query is a small coroutine that asks
its policy how many runs to start, starts them together, and repeats. Finished trials are
streamed to the store as they complete (a crash loses at most the writer's last second),
and a trial already in the store under the same content-addressed key is never paid for
again. Only valid outcomes are reused: an error or timeout is retried by the next run.
"""
from __future__ import annotations

import asyncio
import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from skilleval.backends.base import Backend
from skilleval.budget import Budget, call_bound
from skilleval.domain import ListedSkill, Outcome, Skill, Trial, TrialResult, TriggerCase
from skilleval.errors import BudgetExhausted, HarnessError, UserError
from skilleval.executors.base import Executor, LocalExecutor
from skilleval.store import keys as keymod
from skilleval.store.catalog import Store
from skilleval.store.liveness import LEASES, Lease
from skilleval.terminal import safe
from skilleval.trigger.policies import POLICIES, TriggerSettings, max_runs, verdict
from skilleval.trigger.ready import ReadyTrials
# Re-exported: the trials' store rows live in their own module.
from skilleval.trigger.trial_rows import Recorder, load_valid, trial_rows_recorder

__all__ = ["QueryResult", "TrialRunner", "TriggerSettings", "load_valid", "trial_rows_recorder"]


@dataclass
class QueryResult:
    """A query's trials in repeat order, and what they add up to."""

    case: TriggerCase
    target: str
    settings: TriggerSettings
    results: list[TrialResult] = field(default_factory=list)
    cached: int = 0

    _tally_cache: tuple[int, int, int, int, int, int] | None = field(default=None, repr=False)

    def _tally(self) -> tuple[int, int, int, int, int, int]:
        """(runs, valid, triggers, errors, timeouts, fired_other), recomputed only when
        results were added (reports read these properties many times per query)."""
        n = len(self.results)
        if self._tally_cache is None or self._tally_cache[0] != n:
            valid = triggers = errors = timeouts = other = 0
            for r in self.results:
                o = r.outcome
                if o is Outcome.TRIGGERED:
                    valid += 1
                    triggers += 1
                elif o is Outcome.NOT_TRIGGERED:
                    valid += 1
                    other += r.fired is not None and r.fired != self.target
                elif o is Outcome.ERROR:
                    errors += 1
                else:
                    timeouts += 1
            self._tally_cache = (n, valid, triggers, errors, timeouts, other)
        return self._tally_cache

    @property
    def runs(self) -> int:
        return len(self.results)

    @property
    def valid_runs(self) -> int:
        return self._tally()[1]

    @property
    def triggers(self) -> int:
        return self._tally()[2]

    @property
    def errors(self) -> int:
        return self._tally()[3]

    @property
    def timeouts(self) -> int:
        return self._tally()[4]

    @property
    def fired_other(self) -> int:
        """Valid runs where another listed skill fired instead of ours."""
        return self._tally()[5]

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


def check_policy(settings: TriggerSettings) -> None:
    if settings.policy not in POLICIES:
        raise UserError(f"unknown trigger.policy {settings.policy!r}; valid: {', '.join(POLICIES)}")


def require_measured(results: Sequence[QueryResult]) -> None:
    """HarnessError (exit 3) when not one trial measured anything (none made counts too)."""
    trials = sum(q.runs for q in results)
    if trials == 0:  # e.g. a budget of 0 calls: nothing ran, so nothing errored either
        raise HarnessError("no trial was run; nothing was measured")
    if not any(q.valid_runs for q in results):
        errors = sum(q.errors for q in results)
        timeouts = sum(q.timeouts for q in results)
        raise HarnessError(f"no valid trials: all {trials} trials errored or timed out "
                           f"({errors} errors, {timeouts} timeouts); nothing was measured — "
                           "check the backend settings")


def require_error_rate_within(results: Sequence[QueryResult], limit: float, what: str = "results") -> None:
    """HarnessError (exit 3) when more than ``limit`` (``trigger.max_error_rate``) of the
    trials errored or timed out: the valid rest is then too thin and too selected to trust.
    One rule for every trigger experiment (trigger_eval, routing, attribute)."""
    trials = sum(q.runs for q in results)
    bad = sum(q.errors + q.timeouts for q in results) / max(1, trials)
    if bad > limit:
        raise HarnessError(f"{bad:.0%} of trials errored or timed out (trigger.max_error_rate="
                           f"{limit}); {what} are not trustworthy")


def require_trustworthy(results: Sequence[QueryResult], limit: float, what: str = "results") -> None:
    """`require_measured`, then `require_error_rate_within`: the two exit-3 rules every
    trigger experiment applies (trigger_eval, routing, attribute, trigger_opt)."""
    require_measured(results)
    require_error_rate_within(results, limit, what)


@dataclass
class _QueryState:
    """Book-keeping of one query while it runs: its trials are built lazily, by repeat."""

    result: QueryResult
    skill: Skill
    listing: tuple[ListedSkill, ...]
    bodies: tuple[tuple[str, str], ...]
    ldigest: bytes
    settings: TriggerSettings
    by_repeat: dict[int, TrialResult] = field(default_factory=dict)
    started: int = 0  # repeats handed out so far
    in_flight: int = 0
    triggers: int = 0
    valid: int = 0
    installed: tuple[Skill, ...] = ()  # the folders a real backend installs


class TrialRunner:
    """Runs trigger trials for one backend; reusable across many `evaluate` calls.

    Why a worker pool and not one task per trial: a task costs ~10 µs of event-loop work,
    which at 100k trials is most of the engine's overhead on the stub. `concurrency`
    workers pull ready trials from one queue; a query hands out its next runs (as many as
    its policy asks for) whenever none of its runs are in flight.
    """

    def __init__(self, backend: Backend, *, settings: TriggerSettings, store: Store | None,
                 recorder: Recorder | None = None, budget: Budget | None = None,
                 progress: Any = None, executor: Executor | None = None,
                 flush: Callable[[], None] | None = None) -> None:
        check_policy(settings)
        self.backend = backend
        if executor is None:  # the backend called on this event loop (jobs pass `executor=`)
            executor = LocalExecutor()
            executor.start(backend, {})
        self.executor = executor
        self.settings = settings
        self.store = store
        self.recorder = recorder
        self.budget = budget
        self.progress = progress
        self.flush = flush  # makes recorded trials visible to other readers of the store
        self.calls_made = 0
        self.calls_cached = 0
        self.cost_usd = 0.0
        self.errors = self.timeouts = 0  # of the trials this runner sent (a caller's summary)
        self._identity = keymod.identity_digest(backend.identity())
        self._memo: dict[str, TrialResult] = {}
        self._budget_stop: BudgetExhausted | None = None

    # -- planning -----------------------------------------------------------------------

    def _listing(self, skill: Skill, distractors: Sequence[Skill]
                 ) -> tuple[tuple[ListedSkill, ...], tuple[tuple[str, str], ...], bytes]:
        skills = sorted([skill, *distractors], key=lambda s: s.name)
        names = [s.name for s in skills]
        if len(set(names)) != len(names):
            raise UserError(f"two listed skills share a name: {sorted(n for n in names if names.count(n) > 1)[0]!r}")
        # The model's listing follows Claude Code's rules; every folder is still installed.
        listing = tuple(s.listed for s in skills if s.model_invocable)
        bodies = tuple((s.name, s.body) for s in skills)
        extras = [(s.name, s.install_extras) for s in skills]
        return listing, bodies, keymod.listing_digest(listing, bodies, extras)

    def key(self, ldigest: bytes, target: str, query: str, repeat: int) -> str:
        return keymod.trial_key(self._identity, ldigest, target, query, repeat)

    def max_calls(self, n_cases: int) -> int:
        return n_cases * max_runs(self.settings)

    def _load_cached(self, ldigest: bytes, target: str, cases: Sequence[TriggerCase],
                     settings: TriggerSettings) -> None:
        if self.store is None:
            return
        n = max_runs(settings)
        wanted = [k for c in cases for r in range(n)
                  if (k := self.key(ldigest, target, c.query, r)) not in self._memo]
        if not wanted:
            return
        self._memo.update(load_valid(self.store, "trials", wanted))

    # -- running ------------------------------------------------------------------------

    async def evaluate(self, skill: Skill, cases: Sequence[TriggerCase],
                       distractors: Sequence[Skill] = (), *, label: str = "",
                       settings: TriggerSettings | None = None) -> list[QueryResult]:
        """Evaluate `skill` (with its current description) on `cases`.

        `settings` overrides the runner's for this call (a cheap one-run screen, say); the
        trials it makes share keys with later full evaluations, which reuse them.

        Raises `BudgetExhausted` (carrying ``.partial``, the results so far) when the budget
        ran out; trials already in flight finish and are stored first.
        """
        listing, bodies, ldigest = self._listing(skill, distractors)
        settings = settings or self.settings
        check_policy(settings)
        lease = await self._work_lease(ldigest, skill.name, cases, settings)
        try:
            self._load_cached(ldigest, skill.name, cases, settings)  # after the lease: see its work
            installed = tuple(sorted([skill, *distractors], key=lambda s: s.name))
            return await self._evaluate(skill, cases, listing, bodies, ldigest, label, settings,
                                        installed)
        finally:
            if lease is not None:
                if self.flush is not None:
                    self.flush()
                lease.release(unlink=False)  # unlinking would let a waiter lock a dead inode

    async def _work_lease(self, ldigest: bytes, target: str, cases: Sequence[TriggerCase],
                          settings: TriggerSettings) -> Lease | None:
        """Wait until no other process evaluates the same trial keys, then hold them.

        Why a lease per evaluation and not a lock per trial key: one flock per call costs
        nothing next to 100k stub trials; two identical runs started together still share
        every trial (the second reads what the first stored), and a killed holder frees its
        lease with its death."""
        root = getattr(self.store, "root", None)
        if not isinstance(root, Path):
            return None
        h = hashlib.sha256(self._identity + ldigest + target.encode())
        h.update(repr((max_runs(settings), sorted(c.query for c in cases))).encode())
        lease = Lease(root / LEASES / f"{h.hexdigest()[:32]}.lock")
        told = False
        while True:
            try:
                if lease.try_acquire():
                    return lease
            except OSError:
                return None  # a read-only store: no sharing, same behaviour as before
            if not told:
                print("skilleval: waiting for another run evaluating the same trials (its "
                      "results will be reused)…", file=sys.stderr)
            told = True
            await asyncio.sleep(0.1)

    async def _evaluate(self, skill: Skill, cases: Sequence[TriggerCase],
                        listing: tuple[ListedSkill, ...], bodies: tuple[tuple[str, str], ...],
                        ldigest: bytes, label: str, settings: TriggerSettings,
                        installed: tuple[Skill, ...] = ()) -> list[QueryResult]:
        states = [_QueryState(QueryResult(c, skill.name, settings), skill, listing, bodies, ldigest,
                              settings, installed=installed) for c in cases]
        task = self.progress.add_task(safe(label or skill.name), total=len(cases)) if self.progress else None
        ready: ReadyTrials[_QueryState] = ReadyTrials()
        for st in states:
            self._advance(st, ready, task)
        wake = asyncio.Event()
        busy = [0]  # trials taken by a worker and not yet finished

        async def worker() -> None:
            while True:
                if ready:
                    st, trial = ready.popleft()
                    busy[0] += 1
                    result = await self._call(trial, st)
                    busy[0] -= 1
                    st.in_flight -= 1
                    if result is not None:
                        self._receive(st, trial.repeat, result)
                    if st.in_flight == 0 and self._advance(st, ready, task):
                        wake.set()
                elif busy[0] == 0:
                    wake.set()  # nothing queued, nothing running: everyone may leave
                    return
                else:
                    wake.clear()
                    await wake.wait()

        # All `concurrency` workers, even if few trials are ready now: a query may hand out
        # more runs later (after errors, or under `sequential`) and they should run in parallel.
        n_workers = self.executor.slots(settings.concurrency)
        await asyncio.gather(*(worker() for _ in range(n_workers)))
        for st in states:
            st.result.results = [st.by_repeat[r] for r in sorted(st.by_repeat)]
        if task is not None:
            self.progress.remove_task(task)
        results = [st.result for st in states]
        if self._budget_stop is not None:
            stop, self._budget_stop = self._budget_stop, None
            stop.partial = results  # type: ignore[attr-defined]
            raise stop
        return results

    def _receive(self, st: _QueryState, repeat: int, result: TrialResult) -> None:
        st.by_repeat[repeat] = result
        if result.outcome.valid:
            st.valid += 1
            st.triggers += result.outcome is Outcome.TRIGGERED

    def _advance(self, st: _QueryState, ready: ReadyTrials[_QueryState], task: Any) -> bool:
        """Hand out the query's next runs; cached ones are consumed at once. True if any
        were queued for a worker; when the query is finished, its progress is advanced."""
        q = st.result
        while self._budget_stop is None:
            n = POLICIES[st.settings.policy](st.triggers, st.valid, st.started,
                                             q.case.should_trigger, st.settings)
            if n <= 0:
                break
            queued = 0
            for repeat in range(st.started, st.started + n):
                key = self.key(st.ldigest, st.skill.name, q.case.query, repeat)
                cached = self._memo.get(key)
                if cached is not None:
                    self.calls_cached += 1
                    q.cached += 1
                    self._receive(st, repeat, cached)
                    continue
                ready.append((st, Trial(key, q.case.id, q.case.query, st.skill.name, st.listing,
                                        repeat, self.backend.model, st.bodies, st.installed)))
                queued += 1
            st.started += n
            if queued:
                st.in_flight += queued
                return True
        if task is not None:
            self.progress.advance(task)
        return False

    async def _call(self, trial: Trial, st: _QueryState) -> TrialResult | None:
        if self._budget_stop is not None:
            return None
        if self.budget is not None:
            try:
                await self.budget.areserve()
            except BudgetExhausted as exc:
                self._budget_stop = exc
                return None
        try:
            result = await self.executor.run_trial(trial)
            if not isinstance(result, TrialResult) or not isinstance(result.outcome, Outcome):
                # a plugin backend's wrong answer (a dict, a string outcome) crashed the run
                what = type(result.outcome if isinstance(result, TrialResult) else result).__name__
                raise TypeError(f"run_trial returned {what}, not a TrialResult with an Outcome")
        except Exception as exc:  # a backend bug must not be scored as "not triggered"
            result = TrialResult(trial.key, Outcome.ERROR, error=f"{type(exc).__name__}: {exc}"[:500])
        self.calls_made += 1
        self.cost_usd += result.cost_usd
        self.errors += result.outcome is Outcome.ERROR
        self.timeouts += result.outcome is Outcome.TIMEOUT
        if self.budget is not None:
            self.budget.charge_usd(result.cost_usd, priced=result.outcome.valid, bound_usd=call_bound(
                self.backend, result.input_tokens, result.output_tokens))
        if result.outcome.valid:
            self._memo[trial.key] = result
        if self.recorder is not None:
            self.recorder(trial, result, st.result.case, st.skill)
        return result
