"""Benchmark: near-duplicate search over an eval set, rapidfuzz against character-trigram
Jaccard, and how each scores one typo.

    python benchmarks/evalset_similarity.py [--queries 2000] [--repeats 3]

Prints the wall time of an all-pairs search with `skilleval.evalsets.similar.similar_pairs`
(rapidfuzz ratio + token_sort_ratio, C++) and with a pure-Python trigram Jaccard over the same
queries, their ratio (median of the repeats, all measured in this run), and the score each
measure gives a query against the same query with one transposed letter: the reason the
checks use an edit-distance ratio.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skilleval.evalsets.similar import normalise, similar_pairs  # noqa: E402

WORDS = ("dedupe contacts csv export email rows header vendor encoding utf8 dates iso merge split "
         "columns pivot chart invoice pdf slides release notes commit message tag version bump "
         "customers orders weekly report trim blank lines quoting delimiter postgres import").split()


def queries(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))) + f" {rng.randint(1, 9999)}"
            for _ in range(n)]


def trigrams(text: str) -> set[str]:
    t = f"  {normalise(text)} "
    return {t[i:i + 3] for i in range(len(t) - 2)}


def jaccard_pairs(qs: list[str], threshold: float = 0.9) -> list[tuple[int, int]]:
    grams = [trigrams(q) for q in qs]
    out = []
    for i in range(len(qs)):
        for j in range(i + 1, len(qs)):
            a, b = grams[i], grams[j]
            if len(a & b) / len(a | b) >= threshold:
                out.append((i, j))
    return out


def timed(fn, *args) -> float:  # noqa: ANN001
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    qs = queries(args.queries)
    fast = [timed(similar_pairs, qs) for _ in range(args.repeats)]
    slow = [timed(jaccard_pairs, qs) for _ in range(args.repeats)]
    print(f"{args.queries} queries, all pairs ({args.queries * (args.queries - 1) // 2} pairs), "
          f"median of {args.repeats}:")
    print(f"  rapidfuzz (ratio + token_sort_ratio): {statistics.median(fast):.3f} s")
    print(f"  trigram Jaccard (pure Python):        {statistics.median(slow):.3f} s")
    print(f"  ratio Jaccard / rapidfuzz: {statistics.median(slow) / statistics.median(fast):.1f}x")
    from rapidfuzz import fuzz

    a = "dedupe contacts.csv by email and keep the first row"
    b = "dedupe contacts.csv by email and keep the frist row"
    ga, gb = trigrams(a), trigrams(b)
    print(f"one transposed letter: rapidfuzz ratio {fuzz.ratio(normalise(a), normalise(b)):.0f}/100, "
          f"trigram Jaccard {100 * len(ga & gb) / len(ga | gb):.0f}/100 (threshold 90)")


if __name__ == "__main__":
    main()
