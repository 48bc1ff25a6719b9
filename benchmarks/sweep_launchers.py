"""The same 20 sweep cells with Hydra's basic launcher (one process, cells in turn) and with
the joblib launcher (2 worker processes), each into a fresh store. Prints the wall ratio.

Each cell is a `trigger_eval` on the stub with its own model name, so no cell reuses
another's trials: every cell does its whole work (compose, plan, 60 trials, store, report).

    python benchmarks/sweep_launchers.py [--cells 20] [--repeats 2] [--jobs 2]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ci import ratio_ci  # noqa: E402


def sweep(work: Path, cells: int, launcher: list[str], tag: str) -> float:
    env = {**os.environ, "SKILLEVAL_STORE": str(work / f"store-{tag}"),
           "SKILLEVAL_OUTPUTS": str(work / f"out-{tag}")}
    models = ",".join(f"sim-{tag}-{i}" for i in range(cells))
    cmd = [sys.executable, "-m", "skilleval.cli", "-m", *launcher, "+experiment=trigger_eval",
           "progress=false", f"backend.model={models}"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"sweep failed ({proc.returncode}): {proc.stderr[-2000:]}")
    done = len(list((work / f"out-{tag}").rglob("results.json")))
    assert done == cells, f"{done} of {cells} cells wrote results"
    return wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    joblib = ["hydra/launcher=joblib", f"hydra.launcher.n_jobs={args.jobs}"]
    basic, parallel = [], []
    with tempfile.TemporaryDirectory(prefix="skilleval-sweep-") as tmp:
        for r in range(args.repeats):  # alternate the arms
            basic.append(sweep(Path(tmp), args.cells, [], f"basic{r}"))
            parallel.append(sweep(Path(tmp), args.cells, joblib, f"joblib{r}"))
    ratio, lo, hi = ratio_ci(basic, parallel)
    print(f"{args.cells} sweep cells on {os.cpu_count()} CPUs, {args.repeats} paired repeats")
    print(f"basic launcher: {', '.join(f'{w:.1f}' for w in basic)} s")
    print(f"joblib, {args.jobs} workers: {', '.join(f'{w:.1f}' for w in parallel)} s")
    print(f"wall ratio basic/joblib: {ratio:.2f}x (95% CI {lo:.2f}x to {hi:.2f}x)")


if __name__ == "__main__":
    main()
