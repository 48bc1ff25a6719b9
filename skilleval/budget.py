"""A spending cap shared by everything a job asks a backend for.

Why calls are reserved *before* they are made, money included: with many calls in flight,
a check of the money spent so far lets every one of them start, and each then adds its
cost after the cap was reached (seen: $0.0086 against a $0.005 cap). So `reserve()` books
a call and an estimate of its cost against the cap, and `charge_usd()` replaces the
estimate by the real cost. The estimate is `HEADROOM` times the dearest single call seen so
far (calls of one job vary in output length: serve-sim's trigger trials ±20 %), or, when the
backend can say it (``worst_cost_usd``), the most a call as large as the largest so far could
cost with all its input at the dearest cache-write rate, if that is more. Why both: what the
prompt cache held makes one call cost up to 20 times another of the same size (through the
CLI: $0.0048 for a trial stopped at its decision, then $0.0174 for the next, which answered),
and with the dearest-call rule alone a $0.05 cap was passed by a third. Until one call has
been priced the estimate is unknown, so `areserve()` lets only one call be in flight at a time.

A stop is recorded in `stopped` so that the job can report it and exit with its own code
(4) even when the loop that hit it caught the exception and kept what it had learned.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from skilleval.errors import BudgetExhausted

T = TypeVar("T")

HEADROOM = 2.0


@dataclass
class Budget:
    """`max_calls` / `max_usd` of None mean unlimited."""

    max_calls: int | None = None
    max_usd: float | None = None
    calls: int = 0
    usd: float = 0.0
    in_flight: int = 0
    #: the dearest single call seen so far (None until one was priced)
    per_call_usd: float | None = None
    #: the most any call seen so far could have cost at the dearest input rate (0: unknown)
    bound_usd: float = 0.0
    #: why the budget stopped the job (None while it has not)
    stopped: str | None = None
    #: calls of `max_calls` kept for a later phase (see `holding`), and what that phase is
    held_back: int = 0
    held_for: str = ""
    _settled: asyncio.Event | None = field(default=None, repr=False)

    @contextmanager
    def holding(self, calls: int, purpose: str) -> Iterator[None]:
        """Keep `calls` calls for `purpose` while the block runs, of `max_calls` and of
        `max_usd` (at the mean cost of a call so far): trigger_opt's loop stops where the
        held-out test it must still pay for would no longer fit. With only the call cap held
        back, a money cap was spent whole on selection and the winner never met the test. The
        stop names the cap the user set and what is held back, not a lowered cap."""
        self.held_back, self.held_for = calls, purpose
        try:
            yield
        finally:
            self.held_back, self.held_for = 0, ""

    def reserve(self, calls: int = 1) -> None:
        """Book `calls` calls (and their estimated cost) or raise `BudgetExhausted`."""
        if self.max_calls is not None and self.calls + calls > self.max_calls - self.held_back:
            held = f"; {self.held_back} held back for {self.held_for}" if self.held_back else ""
            self._stop(f"budget.max_calls={self.max_calls} reached ({self.calls} calls made{held})")
        if not self._money_fits(calls):
            held = (f"; ${self._held_usd():.4f} held back for {self.held_for}"
                    if self._held_usd() else "")
            self._stop(f"budget.max_usd={self.max_usd} reached (${self.usd:.4f} spent, "
                       f"{self.in_flight} call(s) in flight, next call up to "
                       f"${self._next_call_usd():.4f}{held})")
        self.calls += calls
        self.in_flight += calls

    def _money_fits(self, calls: int) -> bool:
        """The money cap has room for `calls` more beside those in flight, each booked at
        `HEADROOM` times the dearest call so far (True without a money cap)."""
        est = self._next_call_usd()
        return self.max_usd is None or (
            self.usd < self.max_usd
            and self.usd + (self.in_flight + calls) * est + self._held_usd() <= self.max_usd * (1 + 1e-9))

    def _held_usd(self) -> float:
        """What the held-back calls are expected to cost: the mean of the calls settled so far
        (an expectation, not the in-flight booking's bound: held at the bound, selection
        would stop long before the test needs it)."""
        settled = self.calls - self.in_flight
        return self.held_back * self.usd / settled if self.held_back and settled > 0 else 0.0

    def _next_call_usd(self) -> float:
        """What one more call is booked at (see the module's docstring)."""
        return max(HEADROOM * (self.per_call_usd or 0.0), self.bound_usd)

    async def areserve(self, calls: int = 1) -> None:
        """`reserve()`, waiting first while a money cap is set and either no call has been
        priced yet and another is in flight (its cost is the estimate every later call uses),
        or the calls in flight, booked at the estimate, leave no room for this one: they
        settle at their real cost, usually well under it. Stopping there instead ended a run
        at half its cap ($0.0024 of $0.01 spent, 7 calls in flight booked at $0.001 each)."""
        while self.max_usd is not None and self.in_flight > 0 and (
                self.per_call_usd is None or not self._money_fits(calls)):
            if self._settled is None:
                self._settled = asyncio.Event()
            await self._settled.wait()
        self.reserve(calls)

    def charge_usd(self, usd: float, calls: int = 1, *, priced: bool = True,
                   bound_usd: float | None = None) -> None:
        """Settle `calls` reserved calls that cost `usd` in all. `priced=False` for a call
        whose cost says nothing about the next one (it failed before an answer): a free
        error must not set the estimate to zero. `bound_usd`: the most one of these calls
        could have cost (`worst_cost_usd`), kept as a floor for the next call's booking."""
        self.usd += usd
        if bound_usd:
            self.bound_usd = max(self.bound_usd, float(bound_usd))
        self.in_flight = max(0, self.in_flight - calls)
        if calls and (priced or usd > 0):
            per = usd / calls
            self.per_call_usd = per if self.per_call_usd is None else max(self.per_call_usd, per)
        if self._settled is not None:
            self._settled.set()
            self._settled = None

    def release(self, calls: int = 1) -> None:
        """Settle reserved calls whose cost is unknown (a judge call); nothing is learned."""
        self.in_flight = max(0, self.in_flight - calls)
        if self._settled is not None:
            self._settled.set()
            self._settled = None

    def _stop(self, why: str) -> None:
        self.stopped = self.stopped or why
        raise BudgetExhausted(why)

    @property
    def remaining_calls(self) -> int | None:
        return None if self.max_calls is None else max(0, self.max_calls - self.calls)


class MeteredBackend:
    """A backend whose every ``complete()`` is booked against a budget, and whose spending is
    totalled: what judges, comparators and analyzers are handed. Why a wrapper instead of a
    reservation around each judge: a judge may call more than once (skill-creator's grader
    re-asks after an invalid reply; a plugin judge may do anything), and each call costs what
    its ``Completion`` says. Everything else is the wrapped backend's."""

    def __init__(self, inner: Any, budget: Budget) -> None:
        self._inner = inner
        self._budget = budget
        self.calls = 0
        self.usd = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def complete(self, prompt: str, **kwargs: Any) -> Any:
        await self._budget.areserve()
        self.calls += 1  # counted once sent: a request that fails is a backend call too
        reply = await settled_on_error(self._inner.complete(prompt, **kwargs), self._budget)
        cost = float(getattr(reply, "cost_usd", 0.0) or 0.0)
        self._budget.charge_usd(cost, bound_usd=call_bound(self._inner, getattr(reply, "input_tokens", 0),
                                                          getattr(reply, "output_tokens", 0)))
        self.usd += cost
        return reply


async def settled_on_error(call: Awaitable[T], budget: Budget | None) -> T:
    """Await a call reserved on `budget`; when it raises, settle the reservation as a free,
    unpriced call first. Why: left booked, the failed call stays "in flight" for the rest of
    the run (a money cap then waits on it or refuses the next call), and priced at $0 it
    would set the estimate for the next call to zero."""
    try:
        return await call
    except BaseException:
        if budget is not None:
            budget.charge_usd(0.0, priced=False)
        raise


def metered(backend: Any, budget: Budget | None) -> Any:
    """``backend`` booked against ``budget`` (itself when there is no budget)."""
    return backend if budget is None else MeteredBackend(backend, budget)


def call_bound(backend: Any, input_tokens: int, output_tokens: int) -> float | None:
    """The most a call of this size could cost on `backend` (its optional
    ``worst_cost_usd``; None when it cannot say). The output is doubled (`HEADROOM`): a trial
    stopped at its decision wrote less than the next one may."""
    worst = getattr(backend, "worst_cost_usd", None)
    if not callable(worst) or not (input_tokens or output_tokens):
        return None
    try:
        value = worst(int(input_tokens or 0), int(HEADROOM * (output_tokens or 0)))
    except Exception:  # noqa: BLE001 - a plugin's pricing bug must not stop the run
        return None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None
