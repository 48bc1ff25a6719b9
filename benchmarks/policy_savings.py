"""Backend calls saved by `trigger.policy=decided` against `fixed`, with identical verdicts.

Runs both bundled examples (each with the bundled distractors listed beside it) under
several simulated model names, on a fresh store each time, and prints the calls each
policy made and whether every per-query verdict matched.

    python benchmarks/policy_savings.py [--runs 3] [--models 5]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from skilleval.backends.stub import StubBackend, StubParams
from skilleval.datasets import default_cases_path, load_trigger_cases
from skilleval.skills import load_skill
from skilleval.store.catalog import Store
from skilleval.trigger.policies import TriggerSettings
from skilleval.trigger.runner import TrialRunner

ROOT = Path(__file__).resolve().parent.parent / "experiments"


def run(policy: str, model: str, skill_dir: Path, runs: int, tmp: Path) -> tuple[int, list[str]]:
    skill = load_skill(skill_dir)
    cases = load_trigger_cases(default_cases_path(skill_dir))
    distractors = [load_skill(p) for p in sorted((ROOT / "distractors").iterdir()) if p.is_dir()]
    runner = TrialRunner(StubBackend(StubParams(model=model)), store=Store(tmp / f"{policy}-{model}"),
                         settings=TriggerSettings(runs=runs, policy=policy))
    results = asyncio.run(runner.evaluate(skill, cases, distractors))
    return runner.calls_made, [q.verdict for q in results]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--models", type=int, default=5, help="simulated model names to average over")
    args = ap.parse_args()
    total_fixed = total_decided = 0
    all_same = True
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("changelog-writer", "csv-tidy"):
            f_calls = d_calls = 0
            same = True
            for m in range(args.models):
                model = f"sim-{m}"
                cf, vf = run("fixed", model, ROOT / name, args.runs, Path(tmp))
                cd, vd = run("decided", model, ROOT / name, args.runs, Path(tmp))
                f_calls, d_calls, same = f_calls + cf, d_calls + cd, same and vf == vd
            total_fixed, total_decided, all_same = total_fixed + f_calls, total_decided + d_calls, all_same and same
            print(f"{name:18} fixed {f_calls:5} calls, decided {d_calls:5} calls "
                  f"({1 - d_calls / f_calls:.0%} saved), verdicts identical: {same}")
    print(f"{'total':18} fixed {total_fixed:5} calls, decided {total_decided:5} calls "
          f"({1 - total_decided / total_fixed:.0%} saved), verdicts identical: {all_same}")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
