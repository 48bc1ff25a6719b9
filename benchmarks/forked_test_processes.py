"""Benchmark: the CPU of the test suite's `skilleval` processes, fresh or forked from a warm server.

    python benchmarks/forked_test_processes.py [--repeats 12] [--cases exit2,stub_run]

The suite starts about 750 short `skilleval` processes (``tests/conftest.py``'s runner), and
importing Hydra, omegaconf, rich, DuckDB and pyarrow with numpy is most of a short one's CPU.
``tests/forked_cli.py`` forks them from a server that has imported those once
(``tests/cli_fork_server.py``). Per case, the same command runs both ways, alternating (A, B,
B, A, ...) so that other work on the machine weighs on both alike:

* **fresh**: ``python -m skilleval.cli ARGS`` (the children's rusage);
* **forked**: the forked child's rusage (``wait4``) plus the server's own CPU while serving
  the request (the fork itself), read with psutil.

It prints the mean CPU seconds per process of each, and the paired ratio forked / fresh with its
95 % interval over repeats. The environment is the suite's: PYTHONPATH with tests/without_pandas
and the shared bytecode cache (tests/shared_helpers.started_process_env, as the suite sets them).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))

from _ci import (PROCESS_CASES as CASES, alternating, cpu_ratio_line,  # noqa: E402
                 process_case_args, skilleval_process_cpu)
from shared_helpers import started_process_env  # noqa: E402



def main() -> None:
    args = process_case_args(__doc__)
    base = started_process_env(
        {k: v for k, v in os.environ.items() if not k.startswith(("SKILLEVAL_", "HYDRA_"))})
    import forked_cli

    server = forked_cli.server(base)
    server_proc = psutil.Process(server.pid)
    with tempfile.TemporaryDirectory() as tmp:
        n = 0

        def env() -> dict[str, str]:
            nonlocal n
            n += 1
            return {**base, "SKILLEVAL_STORE": f"{tmp}/store{n}", "SKILLEVAL_OUTPUTS": f"{tmp}/out"}

        def fresh(argv: list[str]) -> float:
            return skilleval_process_cpu(argv, env(), tmp)

        def forked(argv: list[str]) -> float:
            own, children = sum(server_proc.cpu_times()[:2]), server.children_cpu
            server.run(argv, cwd=Path(tmp), env=env(), timeout=300)
            return sum(server_proc.cpu_times()[:2]) - own + server.children_cpu - children

        ways = {"fresh": fresh, "forked": forked}
        for case in args.cases.split(","):
            for way in ways.values():
                way(CASES[case])  # warm-up: bytecode cache, page cache
            cpu = alternating({name: (lambda way=way, case=case: way(CASES[case])) for name, way in ways.items()},
                              args.repeats)
            print(cpu_ratio_line(case, cpu, "forked", "fresh"))


if __name__ == "__main__":
    main()
