"""What `optimize.prescreen=embed` saves in trigger_opt: backend calls, and test accuracy kept.

For each bundled example and seed (split seed s, simulated model ``sim-s``) the real
``skilleval +experiment=trigger_opt`` runs twice in fresh stores, without and with the
prescreen (``optimize.candidates=3``, ``prescreen_keep=1``): on the stub, and with
``--serve-sim`` also through the simulated Messages API (``backend=anthropic_api`` against
``skilleval serve-sim`` on 127.0.0.1). "Test accuracy" is the chosen description's query
accuracy on the held-out test queries, measured again with 10 fresh runs per query on the
stub model that serve-sim also runs (repeat indices neither protocol saw).

Prints the mean calls of each arm, the calls ratio, and the paired differences (with
prescreen minus without) in calls and in test accuracy, with 95 % percentile-bootstrap
intervals over the (example, seed) pairs.

Usage: python benchmarks/prescreen_savings.py [--seeds 5] [--serve-sim]

Measured with ``--seeds 10 --serve-sim`` on a fresh clone (2026-12-02, embed model
``embed-4``: ``blend-item-margin`` fitted on the 540-row calibration set; trigger_opt
defaults of that day, 20 pairs per arm)::

    [stub] calls: without 256.4, with prescreen 141.7 (ratio 0.55); paired diff -114.8 [-133.2, -98.7]
           test accuracy: without 0.830, with 0.840; paired diff +0.010 [-0.040, +0.070]
    [serve-sim (anthropic_api)] the same figures: serve-sim draws what the stub draws per trial

Calls saved are clear; the accuracy difference is not significant (``embed-3`` on the
380-row set gave -0.010 [-0.070, +0.040] at 0.57, the 300-row fit -0.010 [-0.070, +0.050],
the model before it -0.010 [-0.060, +0.030]; an earlier 4-pair run on an older one -0.150
[-0.300, +0.000]).
Only the two original examples.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from skilleval.backends.stub import StubBackend, StubParams
from skilleval.datasets import load_trigger_cases
from skilleval.domain import Outcome, Trial
from skilleval.optimize.splitters import StratifiedParams, StratifiedSplitter
from skilleval.skills import load_skill

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = ["changelog-writer", "csv-tidy"]
FRESH = range(1000, 1010)
DISTRACTORS = [load_skill(p) for p in sorted((REPO / "experiments" / "distractors").iterdir())
               if (p / "SKILL.md").is_file()]
FAKE_KEY = "sk-ant-benchmark-not-a-real-key"


def fresh_accuracy(model: str, skill, description: str, test) -> float:  # noqa: ANN001
    backend = StubBackend(StubParams(model=model))
    variant = skill.with_description(description)
    listing = tuple(s.listed for s in sorted([variant, *DISTRACTORS], key=lambda s: s.name))

    async def run() -> float:
        right = 0
        for case in test:
            hits = 0
            for r in FRESH:
                res = await backend.run_trial(Trial(f"f-{case.id}-{r}", case.id, case.query,
                                                    skill.name, listing, r, model))
                hits += res.outcome is Outcome.TRIGGERED
            right += (hits / len(FRESH) >= 0.5) == case.should_trigger
        return right / len(test)

    return asyncio.run(run())


def optimise(example: str, seed: int, prescreen: bool, tmp: Path, extra: list[str]) -> tuple[int, str]:
    env = {**os.environ, "SKILLEVAL_STORE": str(tmp / "store"), "SKILLEVAL_OUTPUTS": str(tmp / "out"),
           "ANTHROPIC_API_KEY": FAKE_KEY}
    args = [sys.executable, "-m", "skilleval.cli", "+experiment=trigger_opt",
            f"skill={REPO / 'experiments' / example}", f"splitter.seed={seed}",
            f"backend.model=sim-{seed}", "optimize.candidates=3", "progress=false", *extra]
    if prescreen:
        args.append("optimize.prescreen=embed")
    out = subprocess.run(args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    res = json.loads(next((tmp / "out").rglob("results.json")).read_text())
    shutil.rmtree(tmp)
    return res["calls"], res["best_description"]


def boot_ci(diffs: list[float], n: int = 4000) -> tuple[float, float]:
    rng = random.Random(0)
    means = sorted(statistics.mean(rng.choices(diffs, k=len(diffs))) for _ in range(n))
    return means[int(0.025 * n)], means[int(0.975 * n) - 1]


def run_arm(label: str, seeds: int, extra: list[str]) -> None:
    rows = []
    for example in EXAMPLES:
        skill = load_skill(REPO / "experiments" / example)
        cases = load_trigger_cases(REPO / "experiments" / example / "evals" / "trigger_eval.json")
        for seed in range(seeds):
            test = list(StratifiedSplitter(StratifiedParams(seed=seed)).split(cases).test)
            with tempfile.TemporaryDirectory() as t:
                c0, d0 = optimise(example, seed, False, Path(t) / "a", extra)
                c1, d1 = optimise(example, seed, True, Path(t) / "b", extra)
            model = f"sim-{seed}"
            row = {"example": example, "seed": seed, "calls": c0, "calls_pre": c1,
                   "acc": fresh_accuracy(model, skill, d0, test),
                   "acc_pre": fresh_accuracy(model, skill, d1, test)}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    m = lambda k: statistics.mean(r[k] for r in rows)  # noqa: E731
    dc = [r["calls_pre"] - r["calls"] for r in rows]
    da = [r["acc_pre"] - r["acc"] for r in rows]
    (cl, ch), (al, ah) = boot_ci(dc), boot_ci(da)
    print(f"[{label}] {len(rows)} paired runs")
    print(f"  calls: without {m('calls'):.1f}, with prescreen {m('calls_pre'):.1f} "
          f"(ratio {m('calls_pre') / m('calls'):.2f}); paired diff {statistics.mean(dc):+.1f} "
          f"[{cl:+.1f}, {ch:+.1f}]")
    print(f"  test accuracy: without {m('acc'):.3f}, with {m('acc_pre'):.3f}; paired diff "
          f"{statistics.mean(da):+.3f} [{al:+.3f}, {ah:+.3f}]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--serve-sim", action="store_true", help="also run through serve-sim")
    ap.add_argument("--skip-stub", action="store_true")
    args = ap.parse_args()
    if not args.skip_stub:
        run_arm("stub", args.seeds, [])
    if args.serve_sim:
        from skilleval.sim.process import SimProcess

        with SimProcess() as sim:
            run_arm("serve-sim (anthropic_api)", args.seeds,
                    # The harness self-check's explicit-request control is about a real CLI's
                    # plumbing; the simulated model scores it like any query, so it is off here.
                    ["backend=anthropic_api", f"backend.base_url={sim.url}",
                     "trigger.self_check=false"])


if __name__ == "__main__":
    main()
