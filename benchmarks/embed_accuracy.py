"""Query accuracy of `backend=embed` versus the `stub`, on the two bundled examples and on an
unseen skill with a paraphrased eval set (tests/fixtures/embed/meeting-minutes), each listed
with the bundled distractors, through the real trial runner (fixed policy, N runs per query).

The embed calibration was fitted on the two bundled examples' eval sets, so those two are
in-sample for it (two coefficients); meeting-minutes is not. Prints per set: accuracy of each
backend with its Wilson interval, and the paired difference over queries with a bootstrap CI.

    python benchmarks/embed_accuracy.py [--runs 5]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SETS = {
    "changelog-writer": REPO / "experiments" / "changelog-writer",
    "csv-tidy": REPO / "experiments" / "csv-tidy",
    "meeting-minutes (unseen)": REPO / "tests" / "fixtures" / "embed" / "meeting-minutes",
}


def query_passes(backend_name: str, folder: Path, runs: int) -> list[bool]:
    """Per-query pass/fail through the real TrialRunner (no store: nothing cached)."""
    from skilleval.config import example_distractors
    from skilleval.datasets import default_cases_path, load_trigger_cases
    from skilleval.registry import default_registry
    from skilleval.skills import load_skill
    from skilleval.trigger.policies import TriggerSettings
    from skilleval.trigger.runner import TrialRunner

    backend = default_registry().build("backend", {"name": backend_name})
    skill = load_skill(folder)
    cases = load_trigger_cases(default_cases_path(folder))
    distractors = [load_skill(p) for p in example_distractors()]
    runner = TrialRunner(backend, settings=TriggerSettings(runs=runs, policy="fixed"), store=None)
    results = asyncio.run(runner.evaluate(skill, cases, distractors))
    return [bool(r.passed) for r in results]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--boot", type=int, default=2000)
    args = ap.parse_args(argv)
    from skilleval.stats import wilson

    rng = np.random.default_rng(0)
    print(f"{'eval set':28} {'stub':>20} {'embed':>20} {'embed - stub [95% CI]':>26}")
    for label, folder in SETS.items():
        stub = np.array(query_passes("stub", folder, args.runs), dtype=float)
        emb = np.array(query_passes("embed", folder, args.runs), dtype=float)
        diff = emb - stub
        boots = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(args.boot)]
        lo, hi = np.percentile(boots, [2.5, 97.5])

        def fmt(x: np.ndarray) -> str:
            w = wilson(int(x.sum()), len(x))
            return f"{x.mean():.2f} [{w[0]:.2f},{w[1]:.2f}]"

        print(f"{label:28} {fmt(stub):>20} {fmt(emb):>20} {diff.mean():+.2f} [{lo:+.2f},{hi:+.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
