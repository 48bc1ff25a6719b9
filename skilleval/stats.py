"""Interval estimates and paired tests, on top of scipy.

Everything here returns plain floats so results serialise straight to JSON and Parquet.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from scipy import stats as _st


@lru_cache(maxsize=4096)
def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials; (0, 1) when n == 0."""
    if n <= 0:
        return (0.0, 1.0)
    ci = _st.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


@dataclass(frozen=True)
class Estimate:
    """A proportion k/n with its interval. `value` is None when n == 0 (undefined)."""

    k: int
    n: int
    low: float
    high: float

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None

    def to_dict(self) -> dict[str, float | int | None]:
        return {"value": self.value, "low": self.low, "high": self.high, "k": self.k, "n": self.n}


def estimate(k: int, n: int, confidence: float = 0.95) -> Estimate:
    low, high = wilson(k, n, confidence)
    return Estimate(k, n, low, high)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact (binomial) McNemar p-value for discordant pair counts b and c (two-sided)."""
    if b + c == 0:
        return 1.0
    return float(_st.binomtest(min(b, c), b + c, 0.5).pvalue)
