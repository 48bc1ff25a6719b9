"""Shared by the scale benchmarks: a paired confidence interval for a ratio of timings, and
the alternating paired measurement it is computed from."""
from __future__ import annotations

import argparse
import math
import resource
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from scipy import stats


def ratio_ci(a: list[float], b: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """Geometric-mean ratio a/b over paired repeats, with a t-interval on the log ratios.
    With one pair the interval is (nan, nan): a single run claims no difference."""
    logs = [math.log(x / y) for x, y in zip(a, b)]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    half = stats.t.ppf(0.5 + level / 2, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def diff_ci(a: list[float], b: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean paired difference a-b with a t-interval."""
    d = [x - y for x, y in zip(a, b)]
    mean = statistics.fmean(d)
    if len(d) < 2:
        return mean, float("nan"), float("nan")
    half = stats.t.ppf(0.5 + level / 2, len(d) - 1) * statistics.stdev(d) / math.sqrt(len(d))
    return mean, mean - half, mean + half


def alternating(arms: dict[str, Callable[[], float]], repeats: int) -> dict[str, list[float]]:
    """`repeats` measurements of each arm, in the order A, B, B, A, A, B, ... so that other work
    on the machine (and any drift) weighs on every arm alike; paired by index."""
    got: dict[str, list[float]] = {name: [] for name in arms}
    for i in range(repeats):
        for name in (list(arms) if i % 2 == 0 else list(arms)[::-1]):
            got[name].append(arms[name]())
    return got


def skilleval_process_cpu(argv: list[str], env: dict[str, str], cwd: Path | str) -> float:
    """CPU seconds (user + system) of one fresh `python -m skilleval.cli ARGV` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "skilleval.cli", *argv], env=env, cwd=cwd,
                   capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_ratio_line(label: str, cpu: dict[str, list[float]], new: str, old: str) -> str:
    """One printed line: mean CPU seconds per process of arms `old` and `new`, and the paired
    ratio new / old with its 95 % interval."""
    ratio, low, high = ratio_ci(cpu[new], cpu[old])
    return (f"{label:>9}: CPU s per process, {old} {statistics.fmean(cpu[old]):.3f}, "
            f"{new} {statistics.fmean(cpu[new]):.3f}; ratio {ratio:.3f} "
            f"(paired 95 % CI {low:.3f}-{high:.3f}, {len(cpu[new])} pairs)")


#: the short `skilleval` processes the per-process CPU benchmarks measure (bytecode_cache.py,
#: forked_test_processes.py): a refused input (config checks only) and a stub run
PROCESS_CASES: dict[str, list[str]] = {
    "exit2": ["+experiment=trigger_eval", "trigger.runs=0"],
    "stub_run": ["+experiment=trigger_eval", "progress=false", "trigger.runs=1"],
}


def process_case_args(doc: str) -> argparse.Namespace:
    """``--repeats`` (alternating pairs per case) and ``--cases`` (of PROCESS_CASES), parsed."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=12, help="alternating pairs per case")
    parser.add_argument("--cases", default=",".join(PROCESS_CASES),
                        help=f"comma-separated: {', '.join(PROCESS_CASES)}")
    return parser.parse_args()
