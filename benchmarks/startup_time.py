"""Benchmark: what one `skilleval` process costs to start, this tree against another commit.

    python benchmarks/startup_time.py [--base REF] [--repeats 5] [--cases version,help,...]

Every case runs ``python -c "<call skilleval.cli.main(argv)>"`` as a real subprocess, once with
this checkout's source on PYTHONPATH and once with ``git archive REF`` unpacked into a temporary
folder, alternating (base, head, base, head, ...) so that other work on the machine weighs on
both sides alike. Each process gets a fresh SKILLEVAL_STORE / SKILLEVAL_OUTPUTS (the default
store accumulates, and a run's start-up reads it). Both sides use the same installed
dependencies and the same entry points (the installed distribution's metadata), so the
difference is the source alone.

Prints, per case, the mean wall seconds of each side, the paired ratio head/base with a 95 %
interval over repeats, and which of pyarrow, duckdb, numpy, pandas the head process had
imported when it ended (for a case that exits with SystemExit, at exit).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ci import ratio_ci  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pyarrow", "duckdb", "numpy", "pandas")
CASES: dict[str, list[str]] = {
    "version": ["--version"],
    "help": ["--help"],
    "bad_skill": ["+experiment=trigger_eval", "skill=/nonexistent/skill"],
    "bad_key": ["+experiment=trigger_eval", "nosuchkey=1"],
    "view_help": ["view", "--help"],
    "diff_help": ["diff", "--help"],
    "sql_help": ["sql", "--help"],
    "stub_run": ["+experiment=trigger_eval", "progress=false", "trigger.runs=1"],
}
# Calls main() and reports the heavy modules on stderr's last line, however main ends.
PROGRAM = """
import atexit, sys
atexit.register(lambda: print("HEAVY=" + ",".join(m for m in {heavy!r} if m in sys.modules),
                              file=sys.stderr))
sys.argv = ["skilleval", *{argv!r}]
from skilleval.cli import main
main()
"""


def unpack(ref: str, into: Path) -> Path:
    """`git archive ref` of this repository, unpacked under `into`."""
    archive = into / "base.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), ref], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "base", filter="data")
    return into / "base"


def run_once(src: Path, argv: list[str], scratch: Path) -> tuple[float, int, str]:
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        env = {**os.environ, "PYTHONPATH": str(src), "SKILLEVAL_STORE": f"{tmp}/store",
               "SKILLEVAL_OUTPUTS": f"{tmp}/out"}
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", PROGRAM.format(heavy=HEAVY, argv=argv)],
                              env=env, cwd=tmp, capture_output=True, text=True)
        wall = time.perf_counter() - start
    heavy = proc.stderr.rstrip().rsplit("HEAVY=", 1)[-1] if "HEAVY=" in proc.stderr else "?"
    return wall, proc.returncode, heavy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="HEAD", help="commit to compare against (default HEAD)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        base = unpack(args.base, scratch)
        print(f"head = {ROOT} (working tree), base = {args.base}; {args.repeats} alternating pairs")
        print(f"{'case':<10} {'exit':>4} {'base s':>7} {'head s':>7} {'head/base':>9} "
              f"{'95% interval':>15}  head imports")
        for name in args.cases.split(","):
            argv = CASES[name]
            run_once(ROOT, argv, scratch)  # warm the file cache and bytecode of both sides
            run_once(base, argv, scratch)
            times: dict[str, list[float]] = {"base": [], "head": []}
            codes, heavy = set(), ""
            for _ in range(args.repeats):
                for side, src in (("base", base), ("head", ROOT)):
                    wall, code, imported = run_once(src, argv, scratch)
                    times[side].append(wall)
                    codes.add(code)
                    if side == "head":
                        heavy = imported
            ratio, low, high = ratio_ci(times["head"], times["base"])
            code = ",".join(str(c) for c in sorted(codes))
            print(f"{name:<10} {code:>4} {statistics.fmean(times['base']):7.3f} "
                  f"{statistics.fmean(times['head']):7.3f} {ratio:9.2f} "
                  f"{f'[{low:.2f}, {high:.2f}]':>15}  {heavy or '-'}", flush=True)


if __name__ == "__main__":
    main()
