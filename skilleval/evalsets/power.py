"""What an eval set of N queries × R runs can detect: exact power of the paired test.

The paired test is the one skilleval uses to compare two descriptions on the same queries:
the exact (conditional, binomial) McNemar test on discordant pairs, two-sided at ``alpha``
(`skilleval.stats.mcnemar_exact`). Its power is computed *exactly*, by enumeration, not from
a normal approximation (which is badly off at 20-100 pairs): the number of discordant pairs
is D ~ Binomial(N, p10 + p01); given D = d the test rejects in favour of the change when the
improved count B reaches b*(d), the smallest b > d/2 with 2·P(Bin(d, ½) >= b) <= alpha
(computed with exact integers); so power = Σ_d P(D = d) · P(Bin(d, p10/(p10+p01)) >= b*(d)).

How much the two descriptions' verdicts disagree is not known in advance, so the statement
gives two bounds for a change from accuracy p0 to p0 + δ:

* **fixes only** (best case): the change turns δ of the failing units into passes and breaks
  none (p10 = δ, p01 = 0);
* **independent verdicts** (a pessimistic case): new and old verdicts are independent
  (p10 = (1 - p0)(p0 + δ), p01 = p0(1 - p0 - δ)).

The smallest detectable δ is found on a grid of 0.01 and refined by bisection to 1e-4; the
expected width of the 95 % Wilson interval is E[width] over k ~ Binomial(N, p0), summed
exactly. Query-level accuracy (one verdict per query, decided from its R runs) is the unit
skilleval reports; run-level figures treat the N·R runs as independent, which they are not
(runs of one query share it), so they are an optimistic bound, labelled as such.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from skilleval.stats import wilson

POWER = 0.8
#: Up to this many queries (or pairs) binomial tails are summed here, term by term from
#: log-gamma in numpy; beyond, scipy's `bdtrc` (imported only then). Why not always scipy:
#: importing scipy.special costs about 0.2 s, and every trigger_eval / trigger_opt start
#: prints the eval set's power line (`pre_run_lines`), for sets far smaller than this.
SUMMED_UP_TO = 256


EXACT_UP_TO = 256  # d above this: the tail in double precision (exact integers cost O(d²) bits)


def critical_counts(n_max: int, alpha: float) -> tuple[int | None, ...]:
    """b*(d) for d = 0..n_max (None when no split of d pairs can reach significance)."""
    size = 64
    while size < n_max:  # one table per power of two: callers sweep n (queries_needed)
        size *= 2
    return _critical_table(size, alpha)[:n_max + 1]


@lru_cache(maxsize=8)
def _critical_table(n_max: int, alpha: float) -> tuple[int | None, ...]:
    """b*(d) for d = 0..n_max.

    Exact integer comparison (alpha as an exact fraction, so 2**d never meets a float) up to
    EXACT_UP_TO pairs; beyond, the binomial tail from scipy in double precision, whose
    relative error (~1e-15) cannot move b*(d) except on an exact tie with alpha."""
    a = Fraction(alpha)
    out: list[int | None] = []
    for d in range(min(n_max, EXACT_UP_TO) + 1):
        crit, total, tail = None, 2 ** d, 0
        for b in range(d, d // 2, -1):  # P(X >= b) grows as b falls
            tail += math.comb(d, b)
            if 2 * tail * a.denominator <= a.numerator * total:
                crit = b
            else:
                break
        out.append(crit)
    prev = out[-1] if out else None
    if n_max > EXACT_UP_TO:
        from scipy.special import bdtrc
    for d in range(EXACT_UP_TO + 1, n_max + 1):
        b = max(prev or 0, d // 2 + 1)  # b*(d) never falls as d grows
        while b <= d and 2 * float(bdtrc(b - 1, d, 0.5)) > alpha:
            b += 1
        prev = b if b <= d else None
        out.append(prev)
    return tuple(out)


def _log_factorials(n: int) -> np.ndarray:
    return np.array([math.lgamma(i + 1) for i in range(n + 1)])


def _pmf(n: int, p: float) -> np.ndarray:
    """Binomial(n, p) probabilities from log-gamma (no scipy.stats import: ~1.4 s at start)."""
    if p <= 0:
        return np.eye(1, n + 1, 0).ravel()
    if p >= 1:
        return np.eye(1, n + 1, n).ravel()
    k = np.arange(n + 1)
    lf = _log_factorials(n)
    return np.exp(lf[n] - lf[k] - lf[n - k] + k * math.log(p) + (n - k) * math.log1p(-p))


def _upper_tails(b: np.ndarray, d: np.ndarray, p: float) -> np.ndarray:
    """P(Bin(d[i], p) >= b[i]) for each i (scipy's ``bdtrc(b - 1, d, p)``)."""
    if d.size == 0:
        return np.zeros(0)
    n = int(d.max())
    if n > SUMMED_UP_TO:
        from scipy.special import bdtrc
        return bdtrc(b - 1, d, p)
    if p <= 0 or p >= 1:  # all mass on 0 (or on d)
        return ((b <= 0) if p <= 0 else (b <= d)).astype(float)
    k = np.arange(n + 1)[None, :]
    dd = d[:, None]
    lf = _log_factorials(n)
    inside = (k <= dd) & (k >= b[:, None])
    log_pmf = (lf[dd] - lf[k] - lf[np.where(inside, dd - k, 0)]
               + k * math.log(p) + (dd - k) * math.log1p(-p))
    return np.where(inside, np.exp(np.where(inside, log_pmf, 0.0)), 0.0).sum(axis=1)


def paired_power(n: int, p10: float, p01: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided exact McNemar test to find an improvement (B > C)."""
    psi = p10 + p01
    if n <= 0 or psi <= 0:
        return 0.0
    crit = np.array([-1 if c is None else c for c in critical_counts(n, alpha)], dtype=np.int64)
    ok = crit >= 0
    d = np.arange(n + 1, dtype=np.int64)
    pd = _pmf(n, min(1.0, psi))
    tails = _upper_tails(crit[ok], d[ok], p10 / psi)  # P(Bin(d, share) >= b*(d))
    return float(min(1.0, math.fsum((pd[ok] * tails).tolist())))


def cells(p0: float, delta: float, model: str) -> tuple[float, float]:
    """(p10, p01) of a change from accuracy p0 to p0 + delta under `model`."""
    if model == "fixes_only":
        return delta, 0.0
    if model == "independent":
        return (1 - p0) * (p0 + delta), p0 * (1 - p0 - delta)
    raise ValueError(model)


def smallest_detectable(n: int, p0: float, model: str, alpha: float = 0.05,
                        power: float = POWER) -> float | None:
    """Smallest gain δ (to 1e-4) with at least `power`; None when even p0 -> 1 falls short."""
    top = 1.0 - p0
    if top <= 0:
        return None

    def pw(delta: float) -> float:
        return paired_power(n, *cells(p0, delta, model), alpha)

    steps = max(1, math.ceil(top / 0.01))
    prev = 0.0
    for i in range(1, steps + 1):
        delta = min(top, i * 0.01)
        if pw(delta) >= power:
            lo, hi = prev, delta
            while hi - lo > 1e-4:
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if pw(mid) >= power else (mid, hi)
            return hi
        prev = delta
    return None


def expected_width(n: int, p0: float, confidence: float = 0.95) -> float:
    """E[width of the Wilson interval] over k ~ Binomial(n, p0), summed exactly."""
    return math.fsum(float(pk) * (wilson(k, n, confidence)[1] - wilson(k, n, confidence)[0])
                     for k, pk in enumerate(_pmf(n, p0)))


def queries_needed(gain: float, p0: float, model: str, alpha: float = 0.05,
                   power: float = POWER, limit: int = 2000) -> int | None:
    """Smallest N whose exact power reaches `power` for p0 -> p0 + gain (exact power is a
    saw-tooth in N; this is the first N that reaches it)."""
    p10, p01 = cells(p0, gain, model)
    for n in range(2, limit + 1):
        if paired_power(n, p10, p01, alpha) >= power:
            return n
    return None


@dataclass(frozen=True)
class PowerStatement:
    queries: int
    runs: int
    baseline: float
    alpha: float
    query_mde: dict[str, float | None]
    run_mde: dict[str, float | None]
    query_width: float
    run_width: float
    target_gain: float
    queries_for_target: dict[str, int | None]
    query_power_at_top: float  # power of p0 -> 1.0 over queries (fixes only)

    def to_dict(self) -> dict[str, object]:
        return dict(vars(self))

    def lines(self) -> list[str]:
        top = self.baseline + self.target_gain
        q = self.queries_for_target
        return [
            f"power: {self.queries} queries × {self.runs} runs, baseline accuracy {self.baseline:.2f}, "
            f"exact two-sided McNemar α={self.alpha:g}, 80 % power (computed exactly):",
            *_query_lines(self.queries, self.baseline, self.query_mde, self.query_power_at_top),
            f"  expected 95 % interval width of accuracy over queries: {self.query_width:.3f} "
            f"(±{self.query_width / 2:.3f})",
            f"  over the {self.queries * self.runs} runs, if runs were independent (optimistic: they "
            f"are not): gain {_mde(self.run_mde['fixes_only'])} / {_mde(self.run_mde['independent'])}, "
            f"width {self.run_width:.3f}",
            f"  queries needed to detect {self.baseline:.2f} -> {top:.2f}: "
            f"{q['fixes_only'] or '>2000'} (fixes only) to {q['independent'] or '>2000'} (independent)",
        ]


def _mde(v: float | None) -> str:
    return "none" if v is None else f"+{v:.3f}"


def _query_lines(queries: int, baseline: float, query_mde: dict[str, float | None],
                 power_at_top: float) -> list[str]:
    """The statement's query-level lines: the smallest detectable gain, and when there is none,
    the power of even a change to 1.00."""
    return [
        f"  smallest detectable accuracy gain over queries: {_mde(query_mde['fixes_only'])} "
        f"if the change only fixes queries, {_mde(query_mde['independent'])} if verdicts are "
        "independent",
        *([f"  with {queries} queries no gain from {baseline:.2f} is detectable at 80 % "
           f"power: even {baseline:.2f} -> 1.00 is found with {power_at_top:.0%} power"]
          if query_mde["fixes_only"] is None else []),
    ]


def pre_run_lines(queries: int, baseline: float = 0.8, alpha: float = 0.05) -> list[str]:
    """What a run prints of the statement before its first trial: the query-level lines only.
    Computed alone, without the statement's queries-needed search (up to 2000 queries), so
    that a run's start pays milliseconds for it."""
    return _query_lines(
        queries, baseline,
        {m: smallest_detectable(queries, baseline, m, alpha) for m in ("fixes_only", "independent")},
        paired_power(queries, *cells(baseline, 1.0 - baseline, "fixes_only"), alpha))


def power_statement(queries: int, runs: int, baseline: float = 0.8, alpha: float = 0.05,
                    target_gain: float = 0.1) -> PowerStatement:
    models = ("fixes_only", "independent")
    return PowerStatement(
        queries, runs, baseline, alpha,
        {m: smallest_detectable(queries, baseline, m, alpha) for m in models},
        {m: smallest_detectable(queries * runs, baseline, m, alpha) for m in models},
        expected_width(queries, baseline), expected_width(queries * runs, baseline),
        target_gain,
        {m: queries_needed(target_gain, baseline, m, alpha) for m in models},
        paired_power(queries, *cells(baseline, 1.0 - baseline, "fixes_only"), alpha),
    )
