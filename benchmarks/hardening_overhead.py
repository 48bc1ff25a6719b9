"""Overhead of a change on the stub load figure (5,000 queries x 3 runs), paired against a base.

Checks out `--base` (a git ref, default ``main``) into a temporary worktree, then alternates
base and current runs of the same trigger_eval (fresh store each) and prints, per pair, the
child's CPU time (user + sys: robust on a loaded machine, where wall time is not), its wall
time and its peak RSS; then the mean CPU ratio current/base with a 95 % paired interval.

    python benchmarks/hardening_overhead.py [--base main] [--pairs 5] [--queries 5000] [--runs 3]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORDS = ["changelog", "release", "csv", "dedupe", "commit", "slides", "notes", "version", "tag",
         "pdf", "excel", "rows", "headers", "merge", "semver", "since"]


def write_cases(path: Path, n: int) -> None:
    with path.open("w") as fh:
        for i in range(n):
            q = " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(6))
            fh.write(json.dumps({"query": f"{q} request {i}", "should_trigger": i % 2 == 0}) + "\n")


def one_run(source: Path, cases: Path, runs: int) -> tuple[float, float, float]:
    """(cpu seconds, wall seconds, peak RSS MB) of one CLI run importing skilleval from `source`."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SKILLEVAL_STORE": f"{tmp}/store", "SKILLEVAL_OUTPUTS": f"{tmp}/out",
               "PYTHONPATH": str(source)}
        cmd = [sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval", f"cases={cases}",
               f"trigger.runs={runs}", "trigger.policy=fixed", "trigger.concurrency=64",
               "progress=false", "reporter.console.show_queries=false"]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read().decode() if proc.stderr else ""
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"run failed ({source}):\n{err[-2000:]}")
        return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="main", help="git ref to compare against")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(base), args.base],
                       check=True)
        try:
            cases = Path(tmp) / "cases.jsonl"
            write_cases(cases, args.queries)
            ratios = []
            for i in range(args.pairs):
                b = one_run(base, cases, args.runs)
                c = one_run(REPO, cases, args.runs)
                ratios.append(c[0] / b[0])
                print(f"pair {i + 1}: base cpu {b[0]:.2f}s wall {b[1]:.2f}s rss {b[2]:.0f} MB | "
                      f"current cpu {c[0]:.2f}s wall {c[1]:.2f}s rss {c[2]:.0f} MB", flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False)
    mean = statistics.mean(ratios)
    half = 1.96 * statistics.stdev(ratios) / len(ratios) ** 0.5 if len(ratios) > 1 else float("nan")
    print(f"CPU time current/base: {mean:.3f} (95% paired CI {mean - half:.3f} to {mean + half:.3f}); "
          f"{args.queries} queries x {args.runs} runs on the stub")
    return 0


if __name__ == "__main__":
    sys.exit(main())
