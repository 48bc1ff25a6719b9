"""The headline figures of issue 8 (trust), re-measured in one run through the real CLI.

    python benchmarks/trust_figures.py

Each case is the one the issue reported, run as a user would (a `skilleval` subprocess in a
scratch folder, serve-sim on 127.0.0.1 where an API is needed):

* item 1 -- one HTTP 400 with retries off in `functional_eval` (anthropic_api): the exit code
  with 1 run per arm, and with 3 runs the errors counted and the pass-rate delta with its
  interval (it was -0.80 [-0.80, -0.80] and exit 0: the error was graded as a failed skill);
* item 2 -- `trigger_eval` with 30 % injected errors and 5 % timeouts: precision, recall and
  accuracy recomputed from our results.json by skill-creator's own formulas (trigger_rate =
  triggers / runs), beside the ones we print (recall was 0.60 by their reading vs 0.90 ours);
* item 6 -- `kill -9` of a trigger run 10 s in (slow API answers): trials the API had
  answered before the kill, and trials in the store afterwards (it was 64 answered, 0 stored
  in the issue's report; 64/122 before the fix here).

Items 3, 8 and 9 have their own scripts: policy_bias.py, cli_orchestration.py,
optimizer_efficiency.py.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "trust"))

from skilleval.sim.process import SimProcess  # noqa: E402
from skilleval.store.catalog import Store  # noqa: E402
from trust_helpers import skill_creator_run_metrics  # noqa: E402

CSV_TIDY = REPO / "experiments" / "csv-tidy"
FLUSH_SECONDS = 1.0  # conf/store/default.yaml


def cli_env(root: Path) -> dict[str, str]:
    """A private store and outputs folder under `root`; the key is a fake one (serve-sim only)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLEVAL_", "HYDRA_"))}
    env.update(SKILLEVAL_STORE=str(root / "store"), SKILLEVAL_OUTPUTS=str(root / "out"),
               ANTHROPIC_API_KEY="sk-ant-test", COLUMNS="200")
    return env


def skilleval(root: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skilleval.cli", *args, "progress=false"], cwd=root,
                          env=cli_env(root), capture_output=True, text=True, timeout=timeout)


def item1(sim: SimProcess) -> None:
    for runs in (1, 3):
        with tempfile.TemporaryDirectory() as tmp:
            sim.configure(fail_next=[400])
            p = skilleval(Path(tmp), "+experiment=functional_eval", "functional.bootstrap=1000",
                          f"functional.runs={runs}", "functional.analyze=false", "backend=anthropic_api",
                          f"backend.base_url={sim.url}", "backend.max_retries=0", "functional.only=[2]",
                          "functional.concurrency=1")
            last = (p.stderr.strip().splitlines() or [""])[-1]
            line = f"item 1, {runs} run(s) per arm: exit {p.returncode}"
            bench = sorted(Path(tmp, "out").rglob("benchmark.json"))
            if bench:
                b = json.loads(bench[-1].read_text())
                d = b["delta_stats"]["pass_rate"]
                errors = sum(v["error"] + v.get("timeout", 0) for v in b["execution_errors"].values())
                ci = ("(CI n/a: too few valid runs for a 95 % interval)" if d.get("low") is None
                      else f"[{d['low']:+.2f}, {d['high']:+.2f}]")
                line += (f", {errors} errored execution(s) left out, delta "
                         + ("n/a" if d.get("delta") is None else f"{d['delta']:+.2f} {ci}"))
            print(line + (f" -- {last}" if p.returncode else ""))


def item2() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        skilleval(Path(tmp), "+experiment=trigger_eval", "trigger.policy=fixed", "trigger.runs=3",
                  f"skill={CSV_TIDY}", "backend.error_rate=0.3", "backend.timeout_rate=0.05",
                  "backend.max_retries=0", "trigger.max_error_rate=0.9")
        [path] = list(Path(tmp, "out").rglob("results.json"))
        res = json.loads(path.read_text())
    theirs = skill_creator_run_metrics(res["results"])
    m = res["metrics"]
    print(f"item 2, csv-tidy with {m['errors']} errors + {m['timeouts']} timeouts in {m['trials']} trials:")
    for name in ("precision", "recall", "accuracy"):
        ours = m["runs"][name]["value"]
        print(f"  {name:<9} skill-creator's formula on our file {theirs[name]:.3f}   we print "
              + ("n/a" if ours is None else f"{ours:.3f}"))


#: serve-sim's delay before each answer in item 6
LATENCY_S = 0.12


def item6(sim: SimProcess) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sim.configure(latency_ms=1000 * LATENCY_S)
        before = sim.stats().get("POST /v1/messages", 0)
        proc = subprocess.Popen([sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval",
                                 "progress=false", "backend=anthropic_api", f"backend.base_url={sim.url}",
                                 "backend.model=sim-1", "trigger.self_check=false", "trigger.policy=fixed",
                                 "trigger.runs=6", "trigger.concurrency=2", f"skill={CSV_TIDY}"],
                                cwd=root, env=cli_env(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start, history = time.monotonic(), []  # (seconds since start, answered so far)
        while time.monotonic() - start < 10:
            history.append((time.monotonic() - start, sim.stats().get("POST /v1/messages", 0) - before))
            time.sleep(0.05)
        answered = sim.stats().get("POST /v1/messages", 0) - before
        os.kill(proc.pid, signal.SIGKILL)
        killed_at = time.monotonic() - start
        proc.wait()
        sim.configure(latency_ms=0.0)
        stored = 0
        if (root / "store" / "trials").exists():  # the process is reaped: nothing more is written
            [row] = Store(root / "store").query("select count(*) as n from trials").to_pylist()
            stored = row["n"]
        # serve-sim counts a request when it arrives and answers LATENCY_S later, so a trial
        # finished more than flush_seconds before the kill was *sent* LATENCY_S before that
        old = max((n for t, n in history if t <= killed_at - FLUSH_SECONDS - LATENCY_S), default=0)
        print(f"item 6, kill -9 at 10 s ({1000 * LATENCY_S:g} ms per answer, 2 in flight): {answered} "
              f"requests reached the API, {old} of them answered more than flush_seconds "
              f"({FLUSH_SECONDS:g} s) before the kill (must all be stored); {stored} in the store")


def main() -> int:
    with SimProcess() as sim:
        item1(sim)
        item2()
        item6(sim)
    return 0


if __name__ == "__main__":
    sys.exit(main())
