"""Why `trigger_eval` defaults to `fixed`: the bias `decided` puts into rates (not verdicts).

1. Exact expectation of a query's trigger rate when its runs stop as `decided` stops them,
   by enumerating every outcome sequence through the real policy function, vs the true rate.
2. Run-level precision / recall / accuracy on the bundled examples (stub, bundled
   distractors) under `fixed` and `decided`: the verdicts agree, the run-level numbers do not.

    python benchmarks/policy_bias.py [--runs 3]
"""
from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from skilleval.backends.stub import StubBackend, StubParams
from skilleval.datasets import default_cases_path, load_trigger_cases
from skilleval.skills import load_skill
from skilleval.store.catalog import Store
from skilleval.trigger.metrics import summarize
from skilleval.trigger.policies import POLICIES, TriggerSettings
from skilleval.trigger.runner import TrialRunner

ROOT = Path(__file__).resolve().parent.parent / "experiments"


def expected_rate(p: float, policy: str, runs: int, should: bool, threshold: float = 0.5) -> float:
    """E[triggers / runs made] when each run triggers with probability `p` (no errors)."""
    s = TriggerSettings(runs=runs, policy=policy, threshold=threshold)

    def walk(k: int, n: int, prob: float) -> float:
        more = POLICIES[policy](k, n, n, should, s)
        if more <= 0:
            return prob * (k / n if n else 0.0)
        total = 0.0
        # `more` runs are started together; enumerate how many of them trigger
        from math import comb
        for x in range(more + 1):
            w = comb(more, x) * p ** x * (1 - p) ** (more - x)
            total += walk(k + x, n + more, prob * w)
        return total

    return walk(0, 0, 1.0)


def run_metrics(policy: str, runs: int, tmp: Path) -> dict[str, tuple[float | None, ...]]:
    out = {}
    distractors = [load_skill(p) for p in sorted((ROOT / "distractors").iterdir()) if p.is_dir()]
    for name in ("changelog-writer", "csv-tidy"):
        skill = load_skill(ROOT / name)
        cases = load_trigger_cases(default_cases_path(ROOT / name))
        runner = TrialRunner(StubBackend(StubParams()), store=Store(tmp / f"{policy}-{name}"),
                             settings=TriggerSettings(runs=runs, policy=policy))
        results = asyncio.run(runner.evaluate(skill, cases, distractors))
        s = summarize(results)
        out[name] = (tuple(s.runs[m].value for m in ("precision", "recall", "accuracy")),
                     [q.verdict for q in results], runner.calls_made)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"1. expected per-query trigger rate, {args.runs} runs, threshold 0.5")
    print("   true p | fixed  | decided (should trigger) | decided (should not)")
    for p in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        f = expected_rate(p, "fixed", args.runs, True)
        d1 = expected_rate(p, "decided", args.runs, True)
        d0 = expected_rate(p, "decided", args.runs, False)
        print(f"   {p:.1f}    | {f:.3f}  | {d1:.3f} (bias {d1 - p:+.3f})       | {d0:.3f} (bias {d0 - p:+.3f})")
    print("2. run-level metrics on the bundled examples (stub): precision, recall, accuracy")
    with tempfile.TemporaryDirectory() as tmp:
        fixed = run_metrics("fixed", args.runs, Path(tmp))
        decided = run_metrics("decided", args.runs, Path(tmp))
    for name in fixed:
        (mf, vf, cf), (md, vd, cd) = fixed[name], decided[name]
        fmt = lambda m: ", ".join("n/a" if v is None else f"{v:.3f}" for v in m)  # noqa: E731
        print(f"   {name}: fixed [{fmt(mf)}] ({cf} calls) vs decided [{fmt(md)}] ({cd} calls); "
              f"verdicts identical: {vf == vd}")
    print("trigger_eval runs `fixed` by default (unbiased, skill-creator-comparable rates); "
          "`decided` output is labelled early-stopped.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
