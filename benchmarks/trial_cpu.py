"""CPU seconds one `claude_cli` trigger trial costs on this machine: the input to the
cluster sizing in the README. Runs `--trials` trials one at a time through the real `claude`
CLI against serve-sim (no API latency) and reads the children's CPU time (user + system)
from the OS, so a loaded machine inflates wall time but not this figure.

    export SKILLEVAL_CLAUDE_BIN=/path/to/claude
    python benchmarks/trial_cpu.py [--trials 12] [--cores 64] [--total 45000]
"""
from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skilleval.backends.claude_cli import ClaudeCliBackend, ClaudeCliParams  # noqa: E402
from skilleval.domain import ListedSkill, Trial  # noqa: E402
from skilleval.sim.process import SimProcess, locate_claude_cli  # noqa: E402

LISTING = (ListedSkill("changelog-writer", "Write user-facing changelogs and release notes from "
                       "git history. Use when the user asks for release notes or a CHANGELOG."),
           ListedSkill("csv-tidy", "Clean and tidy CSV files. Use when the user asks to fix a CSV."))
QUERIES = ["write release notes for v1.4 from the merged PRs", "tidy up this csv",
           "what is the capital of France?", "update CHANGELOG.md for the release"]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--cores", type=int, default=64, help="cluster size for the sizing line")
    ap.add_argument("--total", type=int, default=45_000, help="trials in the sized sweep")
    args = ap.parse_args()
    claude, reason = locate_claude_cli()
    if claude is None:
        print(f"cannot measure: {reason}", file=sys.stderr)
        return 3
    with SimProcess() as sim:
        cli = ClaudeCliBackend(ClaudeCliParams(executable=claude, model="sim-1", base_url=sim.url,
                                               max_turns=1))
        per: list[float] = []
        errors = 0

        async def go() -> None:
            nonlocal errors
            for i in range(args.trials):
                before = children_cpu()
                r = await cli.run_trial(Trial(f"cpu-{i}", f"c{i}", QUERIES[i % 4], LISTING[0].name,
                                              LISTING, i // 4, "sim-1"))
                per.append(children_cpu() - before)
                errors += not r.outcome.valid
        asyncio.run(go())
    cpu = statistics.median(per)
    print(f"claude {cli.cli_version}: {args.trials} trials, {errors} errors; CPU per trial "
          f"median {cpu:.3f} s (min {min(per):.3f}, max {max(per):.3f})")
    hours = args.total * cpu / 2 / 3600
    minutes = args.total * cpu / args.cores / 60
    print(f"{args.total:,} trials x {cpu:.2f} s = {args.total * cpu:,.0f} CPU-s: "
          f"{hours:.1f} h on 2 cores, {minutes:.1f} min on {args.cores} cores (at full use)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
