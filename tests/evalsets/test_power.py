"""The power statement against an independent exact reference: every (B, C) cell of the
multinomial enumerated, scipy's exact binomial test as the McNemar
test, scipy's Wilson interval for the widths."""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import pytest
from scipy.stats import binomtest

from skilleval.evalsets.power import cells, paired_power, power_statement

ALPHA = 0.05


@lru_cache(maxsize=None)
def rejects(b: int, c: int, alpha: float) -> bool:
    return b > c and binomtest(b, b + c, 0.5).pvalue <= alpha


def ref_power(n: int, p10: float, p01: float, alpha: float = ALPHA) -> float:
    """Sum of the multinomial probabilities of every (B, C) cell the exact test rejects in
    favour of the change (integer coefficients, fsum over cells)."""
    rest = 1 - p10 - p01
    terms = []
    for b in range(n + 1):
        for c in range(n + 1 - b):
            if rejects(b, c, alpha):
                ways = math.factorial(n) // (math.factorial(b) * math.factorial(c) * math.factorial(n - b - c))
                terms.append(ways * p10 ** b * p01 ** c * rest ** (n - b - c))
    return math.fsum(terms)


def ref_width(n: int, p: float) -> float:
    q = Fraction(p)
    total = Fraction(0)
    for k in range(n + 1):
        ci = binomtest(k, n, 0.5).proportion_ci(confidence_level=0.95, method="wilson")
        total += math.comb(n, k) * q ** k * (1 - q) ** (n - k) * Fraction(ci.high - ci.low)
    return float(total)


@pytest.fixture(scope="module")
def statement():  # noqa: ANN201
    return power_statement(20, 3, baseline=0.8, alpha=ALPHA, target_gain=0.1)


def test_20_queries_cannot_detect_any_gain_from_080(statement) -> None:  # noqa: ANN001
    assert statement.query_mde == {"fixes_only": None, "independent": None}
    top = ref_power(20, 0.2, 0.0)  # 0.80 -> 1.00, every failing query fixed
    assert top < 0.8
    assert statement.query_power_at_top == pytest.approx(top, abs=1e-12)


@pytest.mark.parametrize("model", ["fixes_only", "independent"])
def test_run_level_mde_is_the_exact_80_percent_crossing(statement, model: str) -> None:  # noqa: ANN001
    mde = statement.run_mde[model]
    assert mde is not None
    assert ref_power(60, *cells(0.8, mde, model)) >= 0.8
    assert ref_power(60, *cells(0.8, mde - 1e-3, model)) < 0.8


def test_expected_interval_widths_match_the_exact_sum(statement) -> None:  # noqa: ANN001
    assert statement.query_width == pytest.approx(ref_width(20, 0.8), abs=1e-9)
    assert statement.run_width == pytest.approx(ref_width(60, 0.8), abs=1e-9)


def test_queries_needed_is_the_first_n_reaching_80_percent(statement) -> None:  # noqa: ANN001
    n = statement.queries_for_target["fixes_only"]
    assert n is not None
    assert ref_power(n, 0.1, 0.0) >= 0.8 > ref_power(n - 1, 0.1, 0.0)


@pytest.mark.parametrize("n,p10,p01", [(20, 0.3, 0.05), (35, 0.18, 0.08), (12, 0.5, 0.0)])
def test_paired_power_matches_reference(n: int, p10: float, p01: float) -> None:
    assert paired_power(n, p10, p01, ALPHA) == pytest.approx(ref_power(n, p10, p01), abs=1e-12)


def test_exact_power_differs_from_the_normal_approximation() -> None:
    """Why exact: the textbook normal sample size (Connor 1987) for p10=0.12, p01=0.02 says 107
    pairs give 80 % power; enumeration says they do not."""
    assert ref_power(107, 0.12, 0.02) < 0.8
    assert paired_power(107, 0.12, 0.02) == pytest.approx(ref_power(107, 0.12, 0.02), abs=1e-12)


def test_large_sets_neither_overflow_nor_leave_the_exact_test() -> None:
    """5,000 queries × 3 runs (a load test's size) once raised OverflowError (2**d times a
    float); beyond the exact-integer range the critical counts still match scipy's test."""
    from skilleval.evalsets.power import EXACT_UP_TO, critical_counts

    crit = critical_counts(1100, ALPHA)
    for d in (EXACT_UP_TO, EXACT_UP_TO + 1, 300, 1025, 1100):
        b = crit[d]
        assert binomtest(b, d, 0.5).pvalue <= ALPHA < binomtest(b - 1, d, 0.5).pvalue
    statement = power_statement(5000, 3)
    assert 0 < statement.query_mde["fixes_only"] < statement.query_mde["independent"] < 0.05


def test_summed_tails_match_scipy() -> None:
    """Up to SUMMED_UP_TO the binomial tails are summed here rather than taken from scipy's
    bdtrc (whose import a run's start would pay); they must be the same numbers."""
    import numpy as np
    from scipy.special import bdtrc

    from skilleval.evalsets.power import SUMMED_UP_TO, _upper_tails

    rng = np.random.default_rng(7)
    for _ in range(500):
        n = int(rng.integers(1, SUMMED_UP_TO + 1))
        d = rng.integers(0, n + 1, size=20)
        b = rng.integers(1, d + 2)  # b <= d + 1 (scipy gives nan, not 0, beyond)
        for p in (float(rng.random()), 0.5, 1e-9, 1 - 1e-9, 0.0, 1.0):
            assert np.allclose(_upper_tails(b, d, p), bdtrc(b - 1, d, p), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [2, 5, 12, 20, 37, 60, 100, 256, 300])
def test_pre_run_lines_are_the_statements_query_lines(n: int) -> None:
    from skilleval.evalsets.power import pre_run_lines

    lines = power_statement(n, 1).lines()
    assert pre_run_lines(n) == (lines[1:3] if lines[2].startswith("  with") else lines[1:2])
