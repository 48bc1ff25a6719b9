"""Shared by the scale benchmarks: a paired confidence interval for a ratio of timings."""
from __future__ import annotations

import math
import statistics

from scipy import stats


def ratio_ci(a: list[float], b: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """Geometric-mean ratio a/b over paired repeats, with a t-interval on the log ratios.
    With one pair the interval is (nan, nan): a single run claims no difference."""
    logs = [math.log(x / y) for x, y in zip(a, b)]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    half = stats.t.ppf(0.5 + level / 2, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def diff_ci(a: list[float], b: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean paired difference a-b with a t-interval."""
    d = [x - y for x, y in zip(a, b)]
    mean = statistics.fmean(d)
    if len(d) < 2:
        return mean, float("nan"), float("nan")
    half = stats.t.ppf(0.5 + level / 2, len(d) - 1) * statistics.stdev(d) / math.sqrt(len(d))
    return mean, mean - half, mean + half
