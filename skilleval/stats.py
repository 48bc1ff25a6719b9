"""Interval estimates and paired tests, on top of scipy.

Everything here returns plain floats so results serialise straight to JSON and Parquet.
Every function is cross-checked against scipy / statsmodels in ``tests/trust/test_trust_stats.py``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Sequence


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


def wilson_n(p: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``p`` observed on a (possibly fractional)
    effective sample size ``n``; (0, 1) when n <= 0."""
    if n <= 0:
        return (0.0, 1.0)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (0.0 if p <= 0 else max(0.0, centre - half), 1.0 if p >= 1 else min(1.0, centre + half))


def clustered_estimate(pairs: "Sequence[tuple[int, int]]",
                       confidence: float = 0.95) -> dict[str, float | int | None]:
    """A pooled proportion sum(k) / sum(n) over clusters (e.g. the trials of each query), with a
    Wilson interval on the design-effect-adjusted effective sample size (Kish).

    Why not Wilson over the trials: the trials of one query share the query, so they agree far
    more often than independent draws; counting them as independent makes the interval too
    narrow (at 3 runs per query and heterogeneous queries, a nominal 95 % covered 78-84 % in
    simulation; ``tests/trigger/test_routing_intervals.py``). Why not a cluster bootstrap: with
    the 2-3 queries a skill often has, every resample repeats the point and the interval
    collapses to it. Here the variance of the ratio is the cluster-robust (linearised) one,
    ``deff`` = that variance / the binomial one, clamped to >= 1 so the interval is never
    narrower than the trial one, and ``n_eff = N / deff``. At p = 0 or 1 the variance says
    nothing, so the query is the unit (``n_eff`` = the number of queries). Coverage is close to
    nominal from about six queries; with fewer it may fall short, never below the trial view.
    Returns ``{k, n, value, low, high, n_eff, clusters}``; value None when n == 0.
    """
    used = [(k, n) for k, n in pairs if n > 0]
    g, total, hits = len(used), sum(n for _, n in used), sum(k for k, _ in used)
    if not total:
        return {"k": 0, "n": 0, "value": None, "low": None, "high": None, "n_eff": 0, "clusters": 0}
    p = hits / total
    if g < 2 or hits in (0, total):
        n_eff = float(g)
    else:
        var = g / (g - 1) * sum((k - p * n) ** 2 for k, n in used) / total ** 2
        n_eff = total / max(1.0, var / (p * (1 - p) / total))
    low, high = wilson_n(p, n_eff, confidence)
    return {"k": hits, "n": total, "value": p, "low": low, "high": high,
            "n_eff": round(n_eff, 3), "clusters": g}


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


#: the fewest runs per arm for which one eval's runs alone give an interval
def smallest_permutation_p(sizes: "list[tuple[int, int]]") -> float:
    """The smallest two-sided p-value the stratified permutation test can give for evals with
    these (primary runs, baseline runs): one over the number of label arrangements, the
    product over evals of C(runs, primary runs); two over it when every eval has as many runs
    in each arm (swapping the arms then gives the same absolute statistic). 4 evals of one
    run per arm: 2/16 = 0.125; one eval of 3 vs 3 runs: 2/20 = 0.1; of 4 vs 4: 2/70."""
    from math import comb

    arrangements = 1.0
    for n_p, n_b in sizes:
        arrangements *= comb(n_p + n_b, n_p)
        if arrangements > 1e12:
            return 0.0
    return (2.0 if all(n_p == n_b for n_p, n_b in sizes) else 1.0) / arrangements


def bootstrap_ci_clustered(primary: "dict[str, list[float]]", baseline: "dict[str, list[float]]",
                           *, n_boot: int = 2000, confidence: float = 0.95,
                           seed: int = 0) -> tuple[float, float, float]:
    """Delta (primary - baseline) and a percentile bootstrap interval, clustered by eval.

    `primary` / `baseline` map each eval (cluster) to its runs' values. Each bootstrap
    replicate resamples evals with replacement, then runs within each arm of each drawn eval;
    the statistic is the mean over evals of the per-eval difference of means (every eval
    weighs the same). Returns (delta, low, high); an eval missing from either arm is left out.

    There is no interval (NaN bounds, shown as n/a; the delta stays) when the data are too
    few for the stratified permutation test (`stratified_permutation_p`, the p-value printed
    beside it) to reject "no difference" at this confidence whatever they were: when its
    smallest attainable p (`smallest_permutation_p`) is above 1 - confidence. A percentile
    bootstrap of so few units claims far more than they know: "+0.25 [+0.25, +0.25]" from
    2 vs 1 runs of one eval, and "+10 pp [+10 pp, +10 pp]" over 4 evals of one run per arm
    beside a permutation p of 0.125 -- a lower-bound gate passed on one execution an eval.
    """
    import numpy as np

    evals = [e for e in primary if e in baseline and primary[e] and baseline[e]]
    if not evals:
        return (float("nan"), float("nan"), float("nan"))
    p = [np.asarray(primary[e], float) for e in evals]
    b = [np.asarray(baseline[e], float) for e in evals]
    point = float(np.mean([pi.mean() - bi.mean() for pi, bi in zip(p, b)]))
    if smallest_permutation_p([(pi.size, bi.size) for pi, bi in zip(p, b)]) > 1 - confidence:
        return (point, float("nan"), float("nan"))  # too few to say anything (see above)
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

    When every arrangement of the labels can be listed (their count, the product over evals
    of C(runs, primary runs), is at most `n_resamples`: 3 evals × 3 runs per arm make 8000),
    the p-value is the exact one, as scipy's ``permutation_test`` gives, rather than a Monte
    Carlo estimate of it.
    """
    import numpy as np

    evals = [e for e in primary if primary[e] and baseline.get(e)]
    if not evals:
        return None
    exact = _exact_permutation_p(primary, baseline, evals, n_resamples)
    if exact is not None:
        return exact
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


def _exact_permutation_p(primary: "dict[str, list[float]]", baseline: "dict[str, list[float]]",
                         evals: list[str], limit: int) -> float | None:
    """The exact stratified permutation p-value, or None when the arrangements exceed `limit`.

    Each eval's share of the statistic over all of its label arrangements is listed; the
    statistic's distribution is the sum over evals of independent choices, built up one eval
    at a time (an outer sum), so its size is the product of the per-eval counts.
    """
    import itertools

    import numpy as np

    total = 1
    for e in evals:
        total *= math.comb(len(primary[e]) + len(baseline[e]), len(primary[e]))
        if total > limit:
            return None
    dist = np.zeros(1)
    observed = 0.0
    for e in evals:
        p, b = np.asarray(primary[e], float), np.asarray(baseline[e], float)
        pooled, k = np.concatenate([p, b]), p.size
        observed += p.mean() - b.mean()
        whole = pooled.sum()
        shares = np.array([pooled[list(c)].sum() / k - (whole - pooled[list(c)].sum()) / b.size
                           for c in itertools.combinations(range(pooled.size), k)])
        dist = (dist[:, None] + shares[None, :]).ravel()
    observed /= len(evals)
    dist /= len(evals)
    if np.allclose(dist, 0.0) and abs(observed) < 1e-12:
        return 1.0
    return float(np.mean(np.abs(dist) >= abs(observed) - 1e-12))


# -- run diffs: intervals for differences of proportions (added for issue 11) -----------------


def _tango_z(b: int, c: int, n: int, delta: float) -> float:
    """Tango's score statistic for after − before = `delta` (b: right before only, c: right
    after only): (c − b − nΔ) / sqrt(n (2 p̃ + Δ(1 − Δ))), with p̃ the maximum-likelihood
    probability of a "right before only" pair under the constraint (a quadratic's root)."""
    w = (b + c) * (1 - delta) - 2 * delta * (n - c)
    p = (w + math.sqrt(max(0.0, w * w + 8 * n * b * delta * (1 - delta)))) / (4 * n)
    p = min(max(p, max(0.0, -delta)), (1 - delta) / 2)
    var = n * (2 * p + delta * (1 - delta))
    if var <= 0:
        return math.copysign(math.inf, c - b - n * delta) if c - b - n * delta else 0.0
    return (c - b - n * delta) / math.sqrt(var)


def paired_diff_interval(a: int, b: int, c: int, d: int,
                         confidence: float = 0.95) -> tuple[float | None, float, float]:
    """Difference after − before of two proportions measured on the same n items, with
    Tango's (1998) score interval for paired data.

    Cells, per item: `a` right in both, `b` right before only, `c` right after only, `d`
    wrong in both. The delta is (c − b) / n. Why a score interval: with a few dozen queries
    and few flips, Wald's interval collapses to zero width (no flips) or leaves [−1, 1], and
    Newcombe's hybrid interval is degenerate when no pair is discordant; Tango's keeps
    its level there (20 pairs, no flip: about ±16 points). The bounds are found by bisection
    (the statistic decreases in Δ) rather than with scipy.optimize, whose import would cost
    every CLI start. Returns (None, −1, 1) when n == 0.
    """
    n = a + b + c + d
    if n == 0:
        return (None, -1.0, 1.0)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    point = (c - b) / n

    def solve(lo: float, hi: float, target: float) -> float:
        # z(lo) > target > z(hi) (decreasing); returns the crossing
        for _ in range(80):
            mid = (lo + hi) / 2
            if _tango_z(b, c, n, mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    edge = 1 - 1e-12
    low = -1.0 if _tango_z(b, c, n, -edge) <= z else solve(-edge, point, z)
    high = 1.0 if _tango_z(b, c, n, edge) >= -z else solve(point, edge, -z)
    return (point, max(-1.0, min(low, point)), min(1.0, max(high, point)))


def independent_diff_interval(k1: int, n1: int, k2: int, n2: int,
                              confidence: float = 0.95) -> tuple[float | None, float, float]:
    """k2/n2 − k1/n1 for two independent samples (a query's runs before and after), with
    Newcombe's hybrid score interval (1998, method 10: Wilson bounds combined by squares).
    Returns (None, −1, 1) when either sample is empty."""
    if n1 <= 0 or n2 <= 0:
        return (None, -1.0, 1.0)
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, confidence)
    l2, u2 = wilson(k2, n2, confidence)
    delta = p2 - p1
    low = delta - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    high = delta + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return (delta, max(-1.0, low), min(1.0, high))


BOOTSTRAP = "paired percentile bootstrap over queries"
NEWCOMBE_FALLBACK = ("Newcombe's unpaired score interval (every paired bootstrap replicate "
                     "equals the point, so it cannot bound the change)")
NO_BOUND = "no interval: too few queries carry the ratio's denominator"


def paired_ratio_delta(before: "list[tuple[int, int]]", after: "list[tuple[int, int]]",
                       *, confidence: float = 0.95, n_boot: int = 4000,
                       seed: int = 0) -> tuple[tuple[float | None, float, float], str]:
    """Delta of a ratio of sums (after − before), e.g. precision = TP / (TP + FP), over the
    same items resampled together (a percentile bootstrap over items).

    Each item contributes (numerator, denominator) to each side. Why a bootstrap here: the
    denominator of precision changes between runs (which queries fired), so it is not a
    paired proportion over a fixed set and has no closed-form paired interval. Replicates
    where either side has a zero denominator are dropped. Returns (None, −1, 1) when a side
    has no denominator at all, and (delta, −1, 1) when a single item carries every
    denominator: every kept replicate then holds that one item and repeats the point (one
    query fired in both runs gave "+0 [+0, +0]"), so the data bound nothing. When every
    replicate is the point (both precisions at 0 or 1, or two runs alike query by query),
    Newcombe's unpaired interval instead. The second value names the method used (a diff
    labelled every one of these "paired percentile bootstrap").
    """
    import numpy as np

    bn = np.asarray([x[0] for x in before], float)
    bd = np.asarray([x[1] for x in before], float)
    an = np.asarray([x[0] for x in after], float)
    ad = np.asarray([x[1] for x in after], float)
    if not bd.sum() or not ad.sum():
        return (None, -1.0, 1.0), NO_BOUND
    point = float(an.sum() / ad.sum() - bn.sum() / bd.sum())
    if int(np.count_nonzero((bd > 0) | (ad > 0))) < 2:
        return (point, -1.0, 1.0), NO_BOUND
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(bn), (n_boot, len(bn)))
    sb, sa = bd[idx].sum(axis=1), ad[idx].sum(axis=1)
    ok = (sb > 0) & (sa > 0)
    if not ok.any():
        return (point, -1.0, 1.0), NO_BOUND
    reps = an[idx].sum(axis=1)[ok] / sa[ok] - bn[idx].sum(axis=1)[ok] / sb[ok]
    alpha = (1 - confidence) / 2
    low, high = np.quantile(reps, [alpha, 1 - alpha])
    if np.ptp(reps) == 0:
        # Every replicate repeats the point: both precisions sit at a bound (no fired query
        # was wrong, or none right), or the two runs agree query by query, where a percentile
        # bootstrap cannot vary. "+0 [+0, +0]"
        # from three fired queries claimed a certainty the data lack; the unpaired score
        # interval of the two proportions says what they can bound.
        return (independent_diff_interval(int(bn.sum()), int(bd.sum()), int(an.sum()), int(ad.sum()),
                                          confidence), NEWCOMBE_FALLBACK)
    return (point, float(low), float(high)), BOOTSTRAP


def signed(x: float) -> str:
    """An effect to two places with its sign: ``+0.00`` rather than ``-0.00`` for a value that
    rounds to zero (a negated zero, as a leave-one-out effect is, read as a small harm)."""
    return f"{round(x, 2) + 0.0:+.2f}"
