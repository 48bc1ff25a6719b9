"""Interval estimates and paired tests, on top of scipy.

Everything here returns plain floats so results serialise straight to JSON and Parquet.
Every function is cross-checked against scipy / statsmodels in ``tests/trust/test_trust_stats.py``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist


@lru_cache(maxsize=4096)
def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials; (0, 1) when n == 0.

    Written out (it is four lines) instead of scipy's ``binomtest(...).proportion_ci``
    because importing scipy.stats costs ~1.4 s at every CLI start; the two agree to 1e-12
    (``tests/trust/test_trust_stats.py`` checks against scipy and statsmodels).
    """
    if n <= 0:
        return (0.0, 1.0)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if k == 0 else max(0.0, centre - half)  # exact at the edges (no 1e-17 residue)
    high = 1.0 if k == n else min(1.0, centre + half)
    return (low, high)


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


def binomial_upper_tail(k: int, n: int, *, mid: bool = False) -> float:
    """One-sided P(X >= k) for X ~ Binomial(n, 1/2); with `mid`, minus half of P(X = k).

    Summed with math.comb (exact integers) rather than scipy.stats, whose import costs
    more than a second at every CLI start for a sum of at most a few dozen terms.
    """
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k, n + 1))
    if mid:
        tail -= math.comb(n, k) / 2
    return tail / 2 ** n


def mcnemar_exact(b: int, c: int) -> float:
    """Exact (binomial) McNemar p-value for discordant pair counts b and c (two-sided)."""
    return min(1.0, 2 * binomial_upper_tail(max(b, c), b + c)) if b + c else 1.0


# -- functional evals: clustered bootstrap and a paired test (added for issue 5) ------------


def bootstrap_ci_clustered(primary: "dict[str, list[float]]", baseline: "dict[str, list[float]]",
                           *, n_boot: int = 2000, confidence: float = 0.95,
                           seed: int = 0) -> tuple[float, float, float]:
    """Delta (primary - baseline) and a percentile bootstrap interval, clustered by eval.

    `primary` / `baseline` map each eval (cluster) to its runs' values. Each bootstrap
    replicate resamples evals with replacement, then runs within each arm of each drawn eval;
    the statistic is the mean over evals of the per-eval difference of means (every eval
    weighs the same). Returns (delta, low, high); an eval missing from either arm is left out.
    """
    import numpy as np

    evals = [e for e in primary if e in baseline and primary[e] and baseline[e]]
    if not evals:
        return (float("nan"), float("nan"), float("nan"))
    p = [np.asarray(primary[e], float) for e in evals]
    b = [np.asarray(baseline[e], float) for e in evals]
    point = float(np.mean([pi.mean() - bi.mean() for pi, bi in zip(p, b)]))
    rng = np.random.default_rng(seed)
    k = len(evals)
    stats_ = np.empty(n_boot)
    for i in range(n_boot):
        picks = rng.integers(0, k, k)
        diffs = [rng.choice(p[j], p[j].size).mean() - rng.choice(b[j], b[j].size).mean() for j in picks]
        stats_[i] = np.mean(diffs)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(stats_, [alpha, 1 - alpha])
    return (point, float(low), float(high))


def stratified_permutation_p(primary: "dict[str, list[float]]", baseline: "dict[str, list[float]]",
                             *, n_resamples: int = 9999, seed: int = 0) -> float | None:
    """Two-sided p-value that the arm makes no difference, by a permutation test stratified
    by eval: within each eval the arm labels of its runs are shuffled (under the null the
    runs of one eval are exchangeable), and the statistic is the one the interval is built
    on, the mean over evals of the per-eval difference of means.

    Why not a sign-flip over (eval, run) pairs: runs of the two arms are not paired by their
    repeat index, and treating runs as independent units overstates the evidence when evals
    differ; stratifying keeps the eval as the unit of pairing, as the clustered interval does.
    Returns None when no eval has runs in both arms.
    """
    import numpy as np

    evals = [e for e in primary if primary[e] and baseline.get(e)]
    if not evals:
        return None
    rng = np.random.default_rng(seed)
    observed = 0.0
    perm = np.zeros(n_resamples)
    for e in evals:
        p, b = np.asarray(primary[e], float), np.asarray(baseline[e], float)
        observed += p.mean() - b.mean()
        pooled = np.tile(np.concatenate([p, b]), (n_resamples, 1))
        shuffled = rng.permuted(pooled, axis=1)
        perm += shuffled[:, :p.size].mean(axis=1) - shuffled[:, p.size:].mean(axis=1)
    observed /= len(evals)
    perm /= len(evals)
    if np.allclose(perm, 0.0) and abs(observed) < 1e-12:
        return 1.0
    extreme = np.sum(np.abs(perm) >= abs(observed) - 1e-12)
    return float((extreme + 1) / (n_resamples + 1))
