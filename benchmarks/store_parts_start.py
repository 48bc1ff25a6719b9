"""How a run's start grows with the store's part count, and what `store compact` gives back.

Every run reads the store before its first call (its cache of paid trials, the eval set's
stored findings), and DuckDB's cost grows with the number of files, not rows. This script
makes one real stub run (`skilleval +experiment=trigger_eval trigger.runs=1`) in a fresh
store, copies its parts until the store holds ``--parts`` of them (the way months of job
flushes leave one small part each), copies that store and compacts the copy
(`skilleval store compact`), then times the same run on both, alternating, ``--repeats``
pairs, each on a fresh copy so neither store grows. It prints both means and the paired ratio
with its 95 % interval (``_ci.ratio_ci``), and whether the run printed the compaction hint
(``store.compact_hint_parts``, default 500) on each.

    python benchmarks/store_parts_start.py [--parts 2000] [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ci import ratio_ci  # noqa: E402

RUN = ["+experiment=trigger_eval", "trigger.runs=1", "progress=false"]
HINT = "skilleval store compact"


def skilleval(store: Path, outputs: Path, *args: str) -> tuple[float, str]:
    env = {**os.environ, "SKILLEVAL_STORE": str(store), "SKILLEVAL_OUTPUTS": str(outputs)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "skilleval.cli", *args], env=env,
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - start, proc.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="skilleval-parts-"))
    try:
        many, compacted, out = work / "many", work / "compacted", work / "out"
        skilleval(many, out, *RUN)
        trials = sorted((many / "trials").rglob("*.parquet"))
        have = sum(1 for _ in many.rglob("*.parquet"))
        for i in range(max(0, args.parts - have)):  # one more small trials part per "flush"
            dest = trials[0].parent.parent / f"run=copy{i:05d}" / trials[0].name
            dest.parent.mkdir(parents=True)
            shutil.copy2(trials[0], dest)
        shutil.copytree(many, compacted)
        skilleval(compacted, out, "store", "compact")
        counts = {name: sum(1 for _ in (work / name).rglob("*.parquet")) for name in ("many", "compacted")}
        times: dict[str, list[float]] = {"many": [], "compacted": []}
        hints: dict[str, bool] = {}
        for rep in range(args.repeats):
            for name in (("many", "compacted") if rep % 2 == 0 else ("compacted", "many")):
                copy = work / f"{name}-{rep}"
                shutil.copytree(work / name, copy)
                took, err = skilleval(copy, out, *RUN)
                times[name].append(took)
                hints[name] = HINT in err
                shutil.rmtree(copy)
        for name in ("many", "compacted"):
            print(f"{name:>10}: {counts[name]:>5} parts, stub run {sum(times[name]) / len(times[name]):.2f} s "
                  f"(mean of {args.repeats}), compaction hint printed: {'yes' if hints[name] else 'no'}")
        ratio, low, high = ratio_ci(times["many"], times["compacted"])
        print(f"run time on {counts['many']} parts / after compaction: {ratio:.2f} "
              f"(paired 95 % CI {low:.2f}-{high:.2f} over {args.repeats} pairs)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
