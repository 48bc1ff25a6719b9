"""skilleval/stats.py against scipy and statsmodels (test-only dependency, the `test` extra):
the hand-written formulas (written out to keep scipy.stats out of CLI start-up) must agree
with the reference implementations."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from skilleval.stats import (binomial_upper_tail, bootstrap_ci_clustered, mcnemar_exact,
                             stratified_permutation_p, wilson)

GRID = [(k, n) for n in (1, 2, 3, 5, 10, 17, 40, 200) for k in sorted({0, 1, n // 3, n // 2, n - 1, n})
        if 0 <= k <= n]


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("k,n", GRID)
def test_wilson_matches_statsmodels_and_scipy(k: int, n: int, confidence: float) -> None:
    low, high = wilson(k, n, confidence)
    sm = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    sp = sps.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    assert (low, high) == pytest.approx(sm, abs=1e-12)
    assert (low, high) == pytest.approx((sp.low, sp.high), abs=1e-12)


def test_wilson_of_nothing_is_the_whole_interval() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("k,n", [(k, n) for n in range(0, 31, 3) for k in range(0, n + 1)])
def test_binomial_upper_tail_matches_scipy(k: int, n: int) -> None:
    assert binomial_upper_tail(k, n) == pytest.approx(sps.binom.sf(k - 1, n, 0.5) if n else 1.0,
                                                      rel=1e-12, abs=1e-15)
    if n:
        mid = sps.binom.sf(k - 1, n, 0.5) - sps.binom.pmf(k, n, 0.5) / 2
        assert binomial_upper_tail(k, n, mid=True) == pytest.approx(mid, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("b,c", list(itertools.product(range(0, 13, 2), range(0, 13, 3))))
def test_mcnemar_exact_matches_statsmodels(b: int, c: int) -> None:
    ref = mcnemar([[7, b], [c, 5]], exact=True).pvalue if b + c else 1.0
    assert mcnemar_exact(b, c) == pytest.approx(ref, abs=1e-12)
    assert mcnemar_exact(b, c) == pytest.approx(sps.binomtest(b, b + c).pvalue if b + c else 1.0,
                                                abs=1e-12)


def test_stratified_permutation_matches_scipy_on_one_eval() -> None:
    """With one eval the stratified test is the plain two-sample permutation test on the
    difference of means; scipy enumerates it exactly at this size."""
    p, b = [1.0, 0.8, 0.9, 0.7, 1.0], [0.4, 0.6, 0.5, 0.9, 0.3]
    ref = sps.permutation_test((p, b), lambda x, y: np.mean(x) - np.mean(y),
                               permutation_type="independent", alternative="two-sided",
                               n_resamples=np.inf).pvalue
    ours = stratified_permutation_p({"e": p}, {"e": b}, n_resamples=20000, seed=1)
    assert ours == pytest.approx(ref, abs=0.01)


def test_stratified_permutation_of_identical_arms_is_one() -> None:
    assert stratified_permutation_p({"a": [0.5, 0.5]}, {"a": [0.5, 0.5]}) == 1.0
    assert stratified_permutation_p({"a": [1.0]}, {"b": [0.0]}) is None


def test_clustered_bootstrap_point_and_scipy_interval_on_one_eval() -> None:
    """The point estimate is the mean over evals of per-eval differences; with one eval and a
    constant baseline the replicate is the bootstrap of the primary's mean, so the interval
    matches scipy's percentile bootstrap up to Monte Carlo error. One eval with fewer than
    three runs in an arm has no interval."""
    rng = np.random.default_rng(3)
    prim = {"a": list(rng.uniform(0.4, 1.0, 30)), "b": [1.0, 0.0], "c": [0.5]}
    base = {"a": [0.2, 0.4], "b": [0.5, 0.5], "c": [0.5], "d": [1.0]}
    delta, low, high = bootstrap_ci_clustered(prim, base, n_boot=500)
    want = np.mean([np.mean(prim[e]) - np.mean(base[e]) for e in ("a", "b", "c")])
    assert delta == pytest.approx(want) and low <= delta <= high

    one_p, one_b = {"x": list(rng.uniform(0, 1, 40))}, {"x": [0.25] * 3}
    delta, low, high = bootstrap_ci_clustered(one_p, one_b, n_boot=4000, seed=7)
    ref = sps.bootstrap((np.asarray(one_p["x"]) - 0.25,), np.mean, n_resamples=4000,
                        method="percentile", random_state=7).confidence_interval
    assert low == pytest.approx(ref.low, abs=0.02) and high == pytest.approx(ref.high, abs=0.02)
    for few_p, few_b in (({"x": [0.75, 0.75]}, {"x": [0.5]}), ({"x": [1.0, 0.5]}, {"x": [0.2, 0.4]})):
        delta, low, high = bootstrap_ci_clustered(few_p, few_b)
        assert np.isfinite(delta) and np.isnan(low) and np.isnan(high), (few_p, few_b, low, high)
