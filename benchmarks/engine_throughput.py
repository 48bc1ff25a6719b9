"""Engine throughput: 100,000 stub trials end to end (CLI, runner, store), in a subprocess.

Prints trials/s (excluding interpreter start-up, measured from the run's own timing) and
the child's peak RSS. Target on a 2-core machine: >= 20,000 trials/s, <= 500 MB.

    python benchmarks/engine_throughput.py [--trials 100000] [--runs 10]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=10, help="runs per query (fixed policy)")
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()
    n_queries = args.trials // args.runs
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        cases = tmp_path / "cases.jsonl"
        words = ["changelog", "release", "csv", "dedupe", "commit", "slides", "notes", "version",
                 "tag", "pdf", "excel", "rows", "headers", "merge", "semver", "since"]
        with cases.open("w") as fh:
            for i in range(n_queries):
                q = " ".join(words[(i * 7 + j * 3) % len(words)] for j in range(6))
                fh.write(json.dumps({"query": f"{q} request {i}", "should_trigger": i % 2 == 0}) + "\n")
        env = {**os.environ, "SKILLEVAL_STORE": str(tmp_path / "store"),
               "SKILLEVAL_OUTPUTS": str(tmp_path / "out")}
        cmd = [sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval", f"cases={cases}",
               f"trigger.runs={args.runs}", "trigger.policy=fixed",
               f"trigger.concurrency={args.concurrency}", "progress=false",
               "reporter.console.show_queries=false"]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            print(proc.stderr[-2000:], file=sys.stderr)
            return proc.returncode
        result = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())
        made = result["calls"]["made"]
        timing = result.get("timing", {})
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        eval_s = timing.get("evaluate_seconds", wall)
        print(f"trials run:         {made:,}")
        print(f"wall (with start-up): {wall:.2f} s")
        print(f"evaluate + store:   {eval_s:.2f} s")
        print(f"trials/s:           {made / eval_s:,.0f} (target >= 20,000)")
        print(f"trials/s incl. start-up: {made / wall:,.0f}")
        print(f"peak RSS:           {rss_mb:,.0f} MB (target <= 500)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
