"""Concurrency efficiency: 600 stub trials with 200 ms simulated latency at concurrency 10
and 50. Prints wall time / ideal (trials x latency / concurrency); target <= 1.10.

    python benchmarks/concurrency_efficiency.py [--trials 600] [--latency-ms 200]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from skilleval.backends.stub import StubBackend, StubParams
from skilleval.domain import TriggerCase
from skilleval.skills import load_skill
from skilleval.store.catalog import Store
from skilleval.trigger.policies import TriggerSettings
from skilleval.trigger.runner import TrialRunner, trial_rows_recorder

EXAMPLE = Path(__file__).resolve().parent.parent / "experiments" / "changelog-writer"


def measure(trials: int, latency_ms: float, concurrency: int, store_root: Path) -> float:
    skill = load_skill(EXAMPLE)
    runs = 3
    cases = [TriggerCase(f"q{i}", f"write release notes for tag v1.{i}.0", i % 2 == 0)
             for i in range(trials // runs)]
    backend = StubBackend(StubParams(latency_ms=latency_ms))
    store = Store(store_root)
    writer = store.writer("trials", "bench", f"c{concurrency}")
    identity = {"run_id": f"c{concurrency}", "sweep_id": "bench", "job_num": 0,
                "experiment": "bench", "schema_version": 1}
    runner = TrialRunner(backend, store=store,
                         settings=TriggerSettings(runs=runs, policy="fixed", concurrency=concurrency),
                         recorder=trial_rows_recorder(writer, identity, backend))
    start = time.perf_counter()
    asyncio.run(runner.evaluate(skill, cases))
    store.close()
    wall = time.perf_counter() - start
    assert runner.calls_made == len(cases) * runs
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=600)
    ap.add_argument("--latency-ms", type=float, default=200.0)
    args = ap.parse_args()
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for concurrency in (10, 50):
            wall = measure(args.trials, args.latency_ms, concurrency, Path(tmp) / f"s{concurrency}")
            ideal = args.trials * args.latency_ms / 1000 / concurrency
            ratio = wall / ideal
            worst = max(worst, ratio)
            print(f"concurrency {concurrency:>3}: wall {wall:6.2f} s, ideal {ideal:6.2f} s, "
                  f"ratio {ratio:.3f} (target <= 1.10)")
    return 0 if worst <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main())
