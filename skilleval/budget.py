"""A spending cap shared by everything a job asks a backend for."""
from __future__ import annotations

from dataclasses import dataclass

from skilleval.errors import BudgetExhausted


@dataclass
class Budget:
    """`max_calls` / `max_usd` of None mean unlimited. `reserve()` is called before each
    backend call; it raises `BudgetExhausted` once the next call would pass a cap, so a
    loop can stop gracefully and report what it learned so far."""

    max_calls: int | None = None
    max_usd: float | None = None
    calls: int = 0
    usd: float = 0.0

    def reserve(self, calls: int = 1) -> None:
        if self.max_calls is not None and self.calls + calls > self.max_calls:
            raise BudgetExhausted(f"budget.max_calls={self.max_calls} reached ({self.calls} calls made)")
        if self.max_usd is not None and self.usd >= self.max_usd:
            raise BudgetExhausted(f"budget.max_usd={self.max_usd} reached (${self.usd:.4f} spent)")
        self.calls += calls

    def charge_usd(self, usd: float) -> None:
        self.usd += usd

    @property
    def remaining_calls(self) -> int | None:
        return None if self.max_calls is None else max(0, self.max_calls - self.calls)
