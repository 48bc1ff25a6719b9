"""Overhead per trial of `executor=ray` over `local`: the same stub trials (no latency, so the
difference is all dispatch: a Ray task, its ledger round-trips, the result coming back)
through both executors, alternating, on a local Ray with `--cpus` CPUs.

    python benchmarks/executor_overhead.py [--trials 300] [--repeats 3] [--cpus 2]

Prints per-trial wall time of each, the paired difference (ms per trial, 95 % CI) and the
throughput needed from a cluster for that overhead to vanish behind real trials.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ray  # noqa: E402

from _ci import diff_ci  # noqa: E402
from skilleval.backends.stub import StubBackend, StubParams  # noqa: E402
from skilleval.domain import TriggerCase  # noqa: E402
from skilleval.executors.base import LocalExecutor  # noqa: E402
from skilleval.executors.ray_executor import RayExecutor  # noqa: E402
from skilleval.executors.ray_params import RayParams  # noqa: E402
from skilleval.skills import load_skill  # noqa: E402
from skilleval.trigger.policies import TriggerSettings  # noqa: E402
from skilleval.trigger.runner import TrialRunner  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent.parent / "experiments" / "changelog-writer"


def once(executor, model: str, trials: int) -> float:
    skill = load_skill(EXAMPLE)
    cases = [TriggerCase(f"q{i}", f"write release notes for tag v1.{i}.0", i % 2 == 0)
             for i in range(trials)]
    backend = StubBackend(StubParams(model=model))
    executor.start(backend, {"name": "stub", "model": model})
    runner = TrialRunner(backend, store=None, executor=executor,
                         settings=TriggerSettings(runs=1, policy="fixed", concurrency=8))
    loop = asyncio.new_event_loop()
    start = time.perf_counter()
    results = loop.run_until_complete(runner.evaluate(skill, cases))
    wall = time.perf_counter() - start
    loop.run_until_complete(executor.aclose())
    loop.close()
    assert sum(q.valid_runs for q in results) == trials
    return wall / trials


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cpus", type=int, default=2)
    args = ap.parse_args()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    once(RayExecutor(RayParams()), "warm-up", 2 * args.cpus)  # workers started, imports done
    local, remote = [], []
    for r in range(args.repeats):  # alternate, fresh model names: no cache anywhere
        remote.append(once(RayExecutor(RayParams()), f"sim-ray-{r}", args.trials))
        local.append(once(LocalExecutor(), f"sim-local-{r}", args.trials))
    ray.shutdown()
    mean, lo, hi = diff_ci([x * 1e3 for x in remote], [x * 1e3 for x in local])
    print(f"stub trials: {args.trials} x {args.repeats} repeats, local Ray with {args.cpus} CPUs")
    print(f"local   wall per trial: {1e3 * sum(local) / len(local):.3f} ms")
    print(f"ray     wall per trial: {1e3 * sum(remote) / len(remote):.3f} ms")
    print(f"overhead of executor=ray: {mean:.2f} ms per trial (95% CI {lo:.2f} to {hi:.2f}), "
          f"ratio {sum(remote) / sum(local):.1f}x")
    print(f"next to the ~450 ms of CPU a claude_cli trial takes, that is {100 * mean / 450:.1f}% "
          "more per trial")


if __name__ == "__main__":
    main()
