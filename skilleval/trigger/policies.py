"""How many runs a query gets: `fixed`, `decided` and `sequential`.

A policy looks at a query's results so far and answers how many *more* runs to start now
(0 = the query is done). Verdicts use valid trials only: a run that errored or timed out is
spent but says nothing about triggering.

`decided` gives the same verdicts as `fixed`: it stops a query only when *every* way the
remaining runs could turn out (each triggering, not triggering, or failing) leads to the
same verdict; since a trial's draw depends only on its repeat index, the runs `fixed` would
have made beyond that point could not have changed the result.

Its *rates* are another matter: a rate over a sample whose size depends on the outcomes is
biased (at a true rate of 0.3, 3 runs, threshold 0.5, the stopped rate's expectation is
0.272; `benchmarks/policy_bias.py`), and so are run-level precision/recall/accuracy. Only
`fixed` gives unbiased rates comparable with skill-creator's, so it is the default; every
output of an adaptive policy labels its rates as early-stopped (`rates_label`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from skilleval.stats import wilson


@dataclass(frozen=True)
class TriggerSettings:
    runs: int = 3
    threshold: float = 0.5
    policy: str = "fixed"
    max_runs: int = 10
    min_valid: int = 1
    concurrency: int = 8
    confidence: float = 0.95


def verdict(triggers: int, valid: int, should_trigger: bool, s: TriggerSettings) -> str:
    """'pass' | 'fail' | 'insufficient' (fewer than `min_valid` valid runs)."""
    if valid < max(1, s.min_valid):
        return "insufficient"
    rate = triggers / valid
    ok = rate >= s.threshold if should_trigger else rate < s.threshold
    return "pass" if ok else "fail"


def _possible_verdicts(k: int, v: int, remaining: int, should: bool, s: TriggerSettings) -> set[str]:
    out = set()
    for y in range(remaining + 1):  # y of the remaining runs turn out valid
        # The verdict is monotone in the number of triggers x, so the extremes x = 0 and
        # x = y cover every verdict in between.
        for x in (0, y):
            out.add(verdict(k + x, v + y, should, s))
    return out


def _fixed(k: int, v: int, attempted: int, should: bool, s: TriggerSettings) -> int:
    return max(0, s.runs - attempted)


def _decided(k: int, v: int, attempted: int, should: bool, s: TriggerSettings) -> int:
    remaining = s.runs - attempted
    if remaining <= 0 or len(_possible_verdicts(k, v, remaining, should, s)) == 1:
        return 0
    # Start the fewest runs after which, if they all agree, the verdict would be settled.
    for m in range(1, remaining + 1):
        for x in (0, m):
            if len(_possible_verdicts(k + x, v + m, remaining - m, should, s)) == 1:
                return m
    return remaining


def _sequential(k: int, v: int, attempted: int, should: bool, s: TriggerSettings) -> int:
    if attempted < s.runs:
        return s.runs - attempted
    if attempted >= max(s.max_runs, s.runs):
        return 0
    if v == 0:
        return 1
    low, high = wilson(k, v, s.confidence)
    return 1 if low < s.threshold <= high else 0


POLICIES: dict[str, Callable[[int, int, int, bool, TriggerSettings], int]] = {
    "fixed": _fixed,
    "decided": _decided,
    "sequential": _sequential,
}


def rates_unbiased(s: TriggerSettings) -> bool:
    """True when every query gets the same planned number of runs whatever they show."""
    return s.policy == "fixed"


def rates_label(s: TriggerSettings, cut_short: tuple[int, int] | None = None) -> str:
    """How to read per-query rates and run-level metrics under `s` (stored and printed).
    `cut_short`: (queries a budget stop left short of their planned runs, queries): such a
    run's rates are neither the fixed policy's unbiased ones nor comparable with a full run."""
    if cut_short is not None and cut_short[0]:
        return (f"partial (a budget stop left {cut_short[0]} of {cut_short[1]} queries short of the "
                f"{max_runs(s)} planned runs): rates are over the runs made and not comparable "
                "with a full run")
    if rates_unbiased(s):
        return "unbiased (fixed runs per query; skill-creator's reading)"
    return (f"early-stopped ({s.policy}: runs stop once the verdict is settled; verdicts are "
            "exact, rates and run-level metrics are biased and not comparable with fixed runs)")


def max_runs(s: TriggerSettings) -> int:
    """The most runs a query can get under the settings (for plans and cache look-ups)."""
    return max(s.max_runs, s.runs) if s.policy == "sequential" else s.runs
