"""Trials per second of `backend=embed` once every text is embedded (target: >= 5,000/s).

Embeds the bundled examples' queries and skill texts once (timed separately), then answers
every (query, repeat) trial through `run_trial` on one event loop, as the runner does.

    python benchmarks/embed_throughput.py [--repeats 50]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=50)
    args = ap.parse_args(argv)
    from skilleval.config import example_distractors
    from skilleval.datasets import default_cases_path, load_trigger_cases
    from skilleval.domain import Trial
    from skilleval.registry import default_registry
    from skilleval.skills import load_skill

    backend = default_registry().build("backend", {"name": "embed"})
    distractors = [load_skill(p).listed for p in example_distractors()]
    trials = []
    for name in ("changelog-writer", "csv-tidy"):
        folder = REPO / "experiments" / name
        skill = load_skill(folder)
        listing = (skill.listed, *distractors)
        for case in load_trigger_cases(default_cases_path(folder)):
            for r in range(args.repeats):
                trials.append(Trial(f"{case.id}-{r}", case.id, case.query, skill.name, listing, r,
                                    backend.model))
    t0 = time.perf_counter()
    for t in {(t.listing, t.query) for t in trials}:
        backend.choice(*t)
    embed_s = time.perf_counter() - t0

    async def answer_all() -> int:
        valid = 0
        for t in trials:
            valid += (await backend.run_trial(t)).outcome.valid
        return valid

    t0 = time.perf_counter()
    valid = asyncio.run(answer_all())
    elapsed = time.perf_counter() - t0
    print(f"embedded {backend.cache.encoded} texts in {embed_s:.2f}s")
    print(f"{len(trials)} trials ({valid} valid) in {elapsed:.3f}s: {len(trials) / elapsed:,.0f} trials/s "
          f"(target >= 5,000/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
