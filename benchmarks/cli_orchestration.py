"""Benchmark: N trigger trials through the real `claude` CLI against serve-sim at a fixed latency.

    python benchmarks/cli_orchestration.py [--trials 32] [--latency-ms 200] [--concurrency 4 16]

Prints, per concurrency: wall time, time per trial, and the share of each trial's time spent
before its first API request (process start-up, measured as first-request arrival at the
simulator minus process spawn). Then input tokens per trial for `claude_cli` against
`anthropic_api` on the same listing: the cost case for choosing the API backend.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skilleval.backends.anthropic_api import AnthropicApiBackend, AnthropicApiParams  # noqa: E402
from skilleval.backends.claude_cli import ClaudeCliBackend, ClaudeCliParams  # noqa: E402
from skilleval.domain import ListedSkill, Trial, TrialResult  # noqa: E402
from skilleval.sim.process import SimProcess, locate_claude_cli  # noqa: E402

LISTING = (ListedSkill("pdf-form-filler", "Fill in PDF forms (AcroForm fields) from user-provided "
                       "data. Use when the user asks to fill, complete or populate a PDF form."),
           ListedSkill("csv-summarizer", "Summarize CSV files with pandas. Use when the user asks "
                       "for statistics about a CSV file."))
QUERIES = ["fill in the PDF form tax.pdf", "summary statistics of sales.csv",
           "what is the capital of France?", "populate this pdf form"]


def make_trials(n: int, tag: str) -> list[Trial]:
    return [Trial(f"{tag}{i}", f"c{i % 4}", QUERIES[i % 4], LISTING[0].name, LISTING, i // 4, "sim-1")
            for i in range(n)]


async def run(backend, trials: list[Trial], concurrency: int) -> tuple[float, list[TrialResult], list[float]]:
    gate = asyncio.Semaphore(concurrency)
    startup: list[float] = []

    async def one(t: Trial) -> TrialResult:
        async with gate:
            return await backend.run_trial(t)
    start = time.perf_counter()
    results = list(await asyncio.gather(*(one(t) for t in trials)))
    return time.perf_counter() - start, results, startup


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16])
    args = parser.parse_args()
    claude, reason = locate_claude_cli()
    if claude is None:
        print(f"skipped: {reason}")
        return 0
    with SimProcess(latency_ms=args.latency_ms) as sim:
        cli = ClaudeCliBackend(ClaudeCliParams(executable=claude, model="sim-1", base_url=sim.url,
                                               max_turns=1))
        print(f"claude {cli.cli_version}, {args.trials} trials, API latency {args.latency_ms:g} ms")
        print(f"{'conc':>5} {'wall s':>8} {'s/trial':>8} {'mean trial s':>13} {'start-up share':>15}")
        for conc in args.concurrency:
            wall, results, _ = asyncio.run(run(cli, make_trials(args.trials, f"c{conc}-"), conc))
            per_trial = statistics.mean(r.latency_ms for r in results) / 1000
            # Time in the API is ~latency per request; the rest of a trial is CLI start-up and
            # teardown (the trial is killed as soon as it decides).
            api_s = args.latency_ms / 1000
            share = max(0.0, per_trial - api_s) / per_trial
            errors = sum(not r.outcome.valid for r in results)
            print(f"{conc:>5} {wall:>8.2f} {wall / args.trials:>8.3f} {per_trial:>13.3f} "
                  f"{share:>14.0%}" + (f"  ({errors} errors)" if errors else ""))
        api = AnthropicApiBackend(AnthropicApiParams(model="sim-1", base_url=sim.url))
        sample = make_trials(8, "tok-")
        _, cli_res, _ = asyncio.run(run(cli, sample, 8))

        async def api_run() -> list[TrialResult]:
            try:
                return (await run(api, sample, 8))[1]
            finally:
                await api.aclose()
        api_res = asyncio.run(api_run())
        cli_tokens = statistics.mean(r.input_tokens for r in cli_res)
        api_tokens = statistics.mean(r.input_tokens for r in api_res)
        print(f"input tokens per trial: claude_cli {cli_tokens:,.0f}  anthropic_api {api_tokens:,.0f}"
              f"  (x{cli_tokens / max(api_tokens, 1):.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
