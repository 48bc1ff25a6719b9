"""A group-by over 10,000,000 trial rows through `skilleval sql`'s reader (`Store.query`),
before and after `store compact`. Target: <= 1 s after compaction.

Months of use leave one small part per job flush. The store here is built as `--parts`
parts of trial rows (default 5,000 parts of 2,000 rows) in run folders, copied, and the
copy compacted; then the query runs alternately on both stores (`--repeats` pairs), so the
before/after ratio comes with a paired 95 % interval.

    python benchmarks/store_compaction.py [--rows 10000000] [--parts 5000] [--repeats 5]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from _ci import ratio_ci  # noqa: E402
from skilleval.store.catalog import Store  # noqa: E402
from skilleval.store.compact import compact  # noqa: E402
from skilleval.store.stats import store_stats  # noqa: E402

QUERY = ("select skill, outcome, count(*) n, avg(latency_ms) latency, sum(cost_usd) cost "
         "from trials group by skill, outcome order by skill, outcome")
SKILLS = np.array([f"skill-{i:02d}" for i in range(50)])
OUTCOMES = np.array(["triggered", "not_triggered", "error", "timeout"])


def build(root: Path, rows: int, parts: int) -> None:
    store = Store(root)
    rng = np.random.default_rng(0)
    per = rows // parts
    for p in range(parts):
        run = f"run=r{p // 10:05d}"  # ten flushes per job
        n = per if p < parts - 1 else rows - per * (parts - 1)
        table = pa.table({
            "run_id": pa.array([run] * n), "experiment": pa.array(["trigger_eval"] * n),
            "key": pa.array(rng.integers(0, 2**62, n).astype(str)),
            "skill": pa.array(SKILLS[rng.integers(0, len(SKILLS), n)]),
            "outcome": pa.array(OUTCOMES[rng.choice(4, n, p=[0.45, 0.45, 0.07, 0.03])]),
            "latency_ms": pa.array(rng.gamma(2.0, 400.0, n)),
            "cost_usd": pa.array(rng.random(n) * 1e-3),
        })
        store.location.write_part(store.location.join("trials", "experiment=trigger_eval", run),
                                  f"part-{p:06d}.parquet", table)


def timed(root: Path) -> tuple[float, list[dict]]:
    start = time.perf_counter()
    result = Store(root).query(QUERY).to_pylist()
    return time.perf_counter() - start, result


def _same(a: list[dict], b: list[dict]) -> bool:
    """Equal groups and counts; sums equal up to float summation order."""
    return len(a) == len(b) and all(
        x["skill"] == y["skill"] and x["outcome"] == y["outcome"] and x["n"] == y["n"]
        and abs(x["latency"] - y["latency"]) <= 1e-9 * abs(x["latency"])
        and abs(x["cost"] - y["cost"]) <= 1e-9 * abs(x["cost"]) for x, y in zip(a, b))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--parts", type=int, default=5_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dir", help="work folder (default: a temporary one, removed after)")
    args = ap.parse_args()
    work = Path(args.dir or tempfile.mkdtemp(prefix="skilleval-compaction-"))
    small, large = work / "small", work / "compacted"
    try:
        t0 = time.perf_counter()
        build(small, args.rows, args.parts)
        built = time.perf_counter() - t0
        shutil.copytree(small, large)
        t0 = time.perf_counter()
        compact(Store(large).location)
        compacted = time.perf_counter() - t0
        for name, root in (("before", small), ("after", large)):
            s = {v.view: v for v in store_stats(Store(root).location)}["trials"]
            print(f"{name:6}: {s.parts:,} parts, {s.rows:,} rows, {s.bytes / 2**20:,.0f} MiB")
        timed(small), timed(large)  # warm the page cache for both
        before, after = [], []
        for _ in range(args.repeats):
            b, rb = timed(small)
            a, ra = timed(large)
            assert _same(rb, ra), "compaction changed the query's answer"
            before.append(b)
            after.append(a)
        ratio, lo, hi = ratio_ci(before, after)
        print(f"built in {built:.0f} s; compacted in {compacted:.0f} s")
        print(f"group-by over {args.rows:,} rows: before {min(before):.2f} s "
              f"(median {sorted(before)[len(before) // 2]:.2f}), after {min(after):.2f} s "
              f"(median {sorted(after)[len(after) // 2]:.2f}); target <= 1 s after: "
              f"{'met' if sorted(after)[len(after) // 2] <= 1.0 else 'NOT met'}")
        print(f"before/after ratio: {ratio:.1f}x (95% CI {lo:.1f}x to {hi:.1f}x, "
              f"{args.repeats} paired repeats)")
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
