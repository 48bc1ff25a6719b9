"""Retries and adaptive concurrency for real backends.

We retry ourselves (the SDK gets ``max_retries=0``) so that every retry is counted in
``TrialResult.retries`` and the backoff is shared with the concurrency controller.

* Retryable: 408, 409, 429, 5xx (529 included), connection errors and timeouts, and
  *mid-stream* ``error`` events (the SDK raises those as a status-200 ``APIStatusError`` and
  does not retry them). Not retryable: other 4xx, and a 429 that says the spend limit is
  reached (retrying would not help and would look like progress).
* Delay: ``retry-after-ms`` / ``retry-after`` when the server sends one (capped at
  ``max_delay``); otherwise ``min(base * 2**attempt, max_delay)`` with full jitter in its
  upper half, so a burst of 529s does not retry in lock-step.
* ``AdaptiveLimiter`` is AIMD per model (as Inspect does): halve the allowed concurrency on a
  429/529 (at most once per ``cooldown`` seconds, so one burst counts once), and add one slot
  after each ``limit`` successes.
"""
from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

import anthropic


@dataclass(frozen=True)
class Failure:
    retryable: bool
    rate_limited: bool       # 429/529: the controller should back off
    retry_after: float | None
    message: str


def classify(exc: BaseException) -> Failure:
    """What an exception from the SDK means for the retry loop."""
    if isinstance(exc, (anthropic.APITimeoutError, asyncio.TimeoutError)):
        return Failure(True, False, None, f"timeout: {type(exc).__name__}")
    if isinstance(exc, anthropic.APIConnectionError):
        return Failure(True, False, None, f"connection error: {exc}")
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        body: Any = exc.body if isinstance(exc.body, dict) else {}
        err = body.get("error", body) if isinstance(body, dict) else {}
        kind = str(err.get("type", "")) if isinstance(err, dict) else ""
        details = err.get("details") if isinstance(err, dict) else None
        if isinstance(details, dict) and details.get("error_code") == "enforced_spend_limit_reached":
            return Failure(False, False, None, "429 spend limit reached (not retried)")
        retry_after = _retry_after(exc.response.headers if exc.response is not None else {})
        if status == 200:  # an `event: error` inside a 200 stream
            return Failure(True, kind in ("overloaded_error", "rate_limit_error"), retry_after,
                           f"mid-stream {kind or 'error'}")
        rate_limited = status in (429, 529)
        retryable = status in (408, 409, 429) or status >= 500
        return Failure(retryable, rate_limited, retry_after, f"HTTP {status} {kind}".strip())
    return Failure(False, False, None, f"{type(exc).__name__}: {exc}")


def _retry_after(headers: Any) -> float | None:
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        sec = headers.get("retry-after")
        if sec is not None:
            return max(0.0, float(sec))
    except (TypeError, ValueError):
        return None
    return None


def backoff_delay(attempt: int, failure: Failure, base: float, max_delay: float,
                  rng: random.Random | None = None) -> float:
    r = (rng or random).random()
    if failure.retry_after is not None:
        return min(failure.retry_after, max_delay) * (1 + 0.1 * r)
    ceiling = min(base * 2 ** attempt, max_delay)
    return ceiling * (0.5 + 0.5 * r)


class AdaptiveLimiter:
    """An asyncio concurrency limit that shrinks on rate limits and grows back slowly."""

    def __init__(self, maximum: int, minimum: int = 1, cooldown: float = 1.0) -> None:
        self.maximum = max(1, maximum)
        self.minimum = max(1, min(minimum, self.maximum))
        self.limit = self.maximum
        self.cooldown = cooldown
        self.in_flight = 0
        self.cuts = 0
        self._successes = 0
        self._last_cut = -1e9
        self._cond = asyncio.Condition()

    async def acquire(self) -> None:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1

    async def release(self) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    async def __aenter__(self) -> "AdaptiveLimiter":
        await self.acquire()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.release()

    def on_success(self) -> None:
        self._successes += 1
        if self.limit < self.maximum and self._successes >= self.limit:
            self._successes = 0
            self.limit += 1

    def on_rate_limit(self) -> None:
        now = time.monotonic()
        if now - self._last_cut >= self.cooldown:
            self._last_cut = now
            self.limit = max(self.minimum, self.limit // 2)
            self._successes = 0
            self.cuts += 1
