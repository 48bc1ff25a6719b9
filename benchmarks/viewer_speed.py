"""How fast the viewer answers: the report of a 10,000-trial run, and the Runs page over a
store of 1,000,000 trials (budgets: 2 s and 1 s).

1. A real `skilleval +experiment=trigger_eval` run of 1,000 queries x 10 runs on the stub
   (10,000 trials) into a fresh store; then `skilleval report <run> -o FILE` is timed
   in-process (the Python start-up of the CLI is printed apart).
2. A synthetic store of 1,000,000 trials (200 runs x 5,000 trials, written with the store's
   own schemas and part writer) plus their runs and queries rows; the Runs page API
   (first page, a filtered page, a deep page) and the same page over HTTP from a real
   `skilleval view` server are timed, best of 5.

    python benchmarks/viewer_speed.py [--runs 200] [--trials-per-run 5000]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from skilleval.store.catalog import Store
from skilleval.store.schema import SCHEMA_VERSION, TRIALS
from skilleval.viewer.api import Api
from skilleval.viewer.report import write_report
from skilleval.viewer.server import bind


def best_of(n: int, fn) -> float:  # noqa: ANN001
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def report_of_10k(tmp: Path) -> None:
    store = tmp / "store10k"
    cases = tmp / "cases.json"
    cases.write_text(json.dumps([{"query": f"query {i}: write the changelog for release {i}",
                                  "should_trigger": i % 2 == 0} for i in range(1000)]))
    env = {**os.environ, "SKILLEVAL_STORE": str(store), "SKILLEVAL_OUTPUTS": str(tmp / "out")}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval", f"cases={cases}",
                    "trigger.runs=10", "trigger.policy=fixed", "progress=false"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run_s = time.perf_counter() - t
    s = Store(store)
    n = s.query("select count(*) n from trials").column("n")[0].as_py()
    out = tmp / "r.html"
    secs = best_of(3, lambda: write_report(s, "latest", out))
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "skilleval.cli", "report", "latest", "-o", str(out)], env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cli_s = time.perf_counter() - t
    print(f"report of a {n:,}-trial run: {secs:.2f} s (budget 2 s, ratio {secs / 2:.2f}); "
          f"whole CLI incl. Python start-up {cli_s:.2f} s; file {out.stat().st_size / 1e6:.1f} MB "
          f"(the run itself took {run_s:.1f} s)")


def synthetic_store(root: Path, runs: int, per_run: int) -> Store:
    store = Store(root)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    for r in range(runs):
        run_id = f"20260101T{r // 3600:02d}{r // 60 % 60:02d}{r % 60:02d}-{r:010x}"
        ident = {"run_id": run_id, "sweep_id": run_id, "job_num": 0, "experiment": "trigger_eval",
                 "schema_version": SCHEMA_VERSION}
        n = per_run
        cols = {k: pa.array([v] * n) for k, v in ident.items()}
        cols["schema_version"] = pa.array([SCHEMA_VERSION] * n, pa.int16())
        cols["job_num"] = pa.array([0] * n, pa.int32())
        cols.update({
            "ts": pa.array([t0 + dt.timedelta(seconds=r, microseconds=i) for i in range(n)], pa.timestamp("us", tz="UTC")),
            "key": pa.array([f"{r}-{i}" for i in range(n)]), "backend": pa.array(["stub"] * n),
            "model": pa.array([f"sim-{r % 3}"] * n), "skill": pa.array(["csv-tidy"] * n),
            "description": pa.array(["Clean CSV files."] * n),
            "listing": pa.array([["csv-tidy", "pdf"]] * n, pa.list_(pa.string())),
            "case_id": pa.array([f"q{i % 500:03d}" for i in range(n)]),
            "query": pa.array([f"query {i % 500}" for i in range(n)]),
            "should_trigger": pa.array([i % 2 == 0 for i in range(n)]),
            "repeat": pa.array([i // 500 for i in range(n)], pa.int32()),
            "outcome": pa.array(["triggered" if i % 3 else "not_triggered" for i in range(n)]),
            "triggered": pa.array([bool(i % 3) for i in range(n)]),
            "excerpt": pa.array(["[simulated] → Skill(csv-tidy)"] * n),
        })
        table = pa.table({f.name: cols.get(f.name, pa.nulls(n, f.type)) for f in TRIALS}, schema=TRIALS)
        # one part per run, written from columns (the row writer would spend minutes here)
        part = root / "trials" / "experiment=trigger_eval" / f"run={run_id}"
        part.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, part / "part-00000-bench.parquet", compression="zstd")
        now = t0 + dt.timedelta(seconds=r)
        q = store.writer("queries", "trigger_eval", run_id)
        q.write([{**ident, "ts": now, "skill": "csv-tidy", "case_id": f"q{i:03d}", "query": f"query {i}",
                  "should_trigger": i % 2 == 0, "runs": 10, "valid_runs": 10, "triggers": 7, "errors": 0,
                  "timeouts": 0, "trigger_rate": 0.7, "verdict": "pass" if i % 2 == 0 else "fail",
                  "passed": i % 2 == 0, "fired_other": 0, "threshold": 0.5, "cached_runs": 0} for i in range(500)])
        q.close()
        rw = store.writer("runs", "trigger_eval", run_id)
        for status in ("running", "done"):
            rw.write([{**ident, "ts": now, "status": status, "backend": "stub", "model": f"sim-{r % 3}",
                       "skill": "csv-tidy", "output_dir": str(root / "out"), "overrides": [f"x={r}"],
                       "config_yaml": "", "plugin_versions": "{}", "calls_made": n, "calls_cached": 0,
                       "cost_usd": 0.0, "summary_json": json.dumps({"accuracy": 0.5})}])
            rw.flush()
        rw.close()
    return store


def runs_page_of_1m(tmp: Path, runs: int, per_run: int) -> None:
    t = time.perf_counter()
    store = synthetic_store(tmp / "store1m", runs, per_run)
    built = time.perf_counter() - t
    api = Api(store)
    n = store.query("select count(*) n from trials").column("n")[0].as_py()
    cold = best_of(1, lambda: api.get("/api/runs", {}))  # reads every runs part once
    first = best_of(5, lambda: api.get("/api/runs", {}))
    filt = best_of(5, lambda: api.get("/api/runs", {"q": "sim-2", "status": "done"}))
    deep = best_of(5, lambda: api.get("/api/runs", {"offset": str(runs - 50)}))
    srv = bind(api, 0)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        http = best_of(5, lambda: urllib.request.urlopen(srv.url + "api/runs?limit=50", timeout=30).read())
    finally:
        srv.shutdown()
        srv.server_close()
    worst = max(first, filt, deep, http)
    print(f"Runs page over a store of {n:,} trials ({runs} runs; built in {built:.1f} s): first page "
          f"{first:.3f} s, filtered {filt:.3f} s, last page {deep:.3f} s, over HTTP {http:.3f} s "
          f"(budget 1 s, worst ratio {worst:.2f}); the very first request, before the runs index "
          f"is read ({runs * 2} parts; `skilleval view` reads it in the background at start-up): "
          f"{cold:.2f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--trials-per-run", type=int, default=5000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report_of_10k(Path(tmp))
        runs_page_of_1m(Path(tmp), args.runs, args.trials_per_run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
