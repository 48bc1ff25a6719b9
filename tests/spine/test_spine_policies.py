"""Run policies, checked as properties over thousands of random outcome sequences."""
from __future__ import annotations

import math
import random

import pytest

from skilleval.trigger.policies import POLICIES, TriggerSettings, max_runs, verdict

T, N, E = "T", "N", "E"  # triggered, not triggered, error/timeout


def drive(policy: str, seq: list[str], should: bool, s: TriggerSettings,
          trace: list[tuple[int, int, int]] | None = None) -> tuple[str, int]:
    """Run a policy over a predetermined outcome sequence (outcome of repeat i is seq[i]),
    the way the runner does: ask how many more, start them, repeat. -> (verdict, runs used)."""
    fn = POLICIES[policy]
    k = v = attempted = 0
    for _ in range(10_000):
        n = fn(k, v, attempted, should, s)
        if trace is not None:
            trace.append((k, v, attempted))
        if n <= 0:
            return verdict(k, v, should, s), attempted
        for outcome in seq[attempted:attempted + n]:
            v += outcome != E
            k += outcome == T
        attempted += n
    raise AssertionError("policy never stopped")


def random_sequence(rng: random.Random, length: int) -> list[str]:
    p_trigger, p_error = rng.random(), rng.choice([0.0, 0.0, 0.1, 0.3, 0.8])
    return [E if rng.random() < p_error else (T if rng.random() < p_trigger else N)
            for _ in range(length)]


def test_decided_gives_fixed_verdicts_with_no_more_runs() -> None:
    rng = random.Random(20240611)
    thresholds = [0.1, 0.25, 1 / 3, 0.4, 0.5, 0.6, 2 / 3, 0.75, 0.9, 1.0]
    saved = 0
    cases = 0
    for _ in range(6000):
        s = TriggerSettings(runs=rng.randint(1, 8), threshold=rng.choice(thresholds),
                            min_valid=rng.choice([1, 1, 2, 3]), policy="decided")
        seq = random_sequence(rng, s.runs)
        should = rng.random() < 0.5
        fixed_verdict, fixed_runs = drive("fixed", seq, should, s)
        decided_verdict, decided_runs = drive("decided", seq, should, s)
        assert fixed_runs == s.runs
        assert decided_verdict == fixed_verdict, (seq, should, s)
        assert decided_runs <= fixed_runs, (seq, should, s)
        saved += fixed_runs - decided_runs
        cases += 1
    assert cases == 6000
    assert saved > 0  # decided must actually save calls somewhere


def test_decided_saves_on_clear_cases() -> None:
    s = TriggerSettings(runs=3, threshold=0.5)
    # Two triggers out of three runs already settle a should-trigger query.
    assert drive("decided", [T, T, N], True, s) == ("pass", 2)
    assert drive("decided", [N, N, T], True, s) == ("fail", 2)
    # Errors are spent runs that say nothing: all errors -> insufficient, like fixed.
    assert drive("decided", [E, E, E], True, s) == drive("fixed", [E, E, E], True, s)
    assert drive("fixed", [E, E, E], True, s) == ("insufficient", 3)


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_sequential_stops_when_the_interval_excludes_the_threshold() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        s = TriggerSettings(runs=rng.randint(1, 5), max_runs=rng.randint(1, 25),
                            threshold=rng.choice([0.2, 0.3, 0.5, 0.7, 0.8]), policy="sequential")
        cap = max_runs(s)
        assert cap == max(s.runs, s.max_runs)
        seq = random_sequence(rng, cap)
        should = rng.random() < 0.5
        trace: list[tuple[int, int, int]] = []
        _, used = drive("sequential", seq, should, s, trace)
        assert used <= cap
        assert used >= min(s.runs, cap)
        for i, (k, v, attempted) in enumerate(trace):
            stopped = i == len(trace) - 1
            if attempted < s.runs:
                assert not stopped
                continue
            if attempted >= cap:
                assert stopped
                continue
            if v == 0:
                assert not stopped  # nothing measured yet: keep sampling
                continue
            low, high = _wilson(k, v)
            if abs(low - s.threshold) < 1e-9 or abs(high - s.threshold) < 1e-9:
                continue  # on the boundary: either answer is defensible
            straddles = low < s.threshold <= high
            assert stopped == (not straddles), (k, v, attempted, s)


def test_sequential_never_exceeds_max_runs_even_when_undecided() -> None:
    s = TriggerSettings(runs=3, max_runs=12, threshold=0.5, policy="sequential")
    seq = [T, N] * 6  # hovers at the threshold forever
    verdict_, used = drive("sequential", seq, True, s)
    assert used == 12
    # a clear-cut query stops at the initial runs
    assert drive("sequential", [T] * 12, True, s)[1] < 12


@pytest.mark.parametrize("k, v, should, expected", [
    (0, 0, True, "insufficient"), (1, 2, True, "pass"), (1, 2, False, "fail"),
    (0, 2, False, "pass"), (2, 3, True, "pass"), (1, 3, True, "fail"),
])
def test_verdict_threshold_meaning(k: int, v: int, should: bool, expected: str) -> None:
    # skill-creator's meaning: should_trigger passes at rate >= threshold, otherwise rate < threshold.
    assert verdict(k, v, should, TriggerSettings(threshold=0.5)) == expected


def test_verdict_min_valid() -> None:
    s = TriggerSettings(min_valid=2)
    assert verdict(1, 1, True, s) == "insufficient"
    assert verdict(1, 2, True, s) == "pass"
