"""Benchmark: the CPU a `skilleval` process spends when it has no compiled bytecode to read.

    python benchmarks/bytecode_cache.py [--repeats 12] [--cases exit2,stub_run]

The test suite starts about a thousand `skilleval` processes. Where ``PYTHONDONTWRITEBYTECODE``
is set (it is in this project's sandboxes), nothing under ``skilleval/`` is ever cached, so
every process compiles each module it imports again. ``tests/conftest.py`` therefore points
the processes a test starts at one shared cache folder (``PYTHONPYCACHEPREFIX``).

Per case, the same command runs as a real subprocess in two settings, alternating (A, B, B,
A, ...) so that other work on the machine weighs on both alike:

* **no cache**: ``PYTHONDONTWRITEBYTECODE=1`` and no prefix (site-packages still have the
  bytecode pip wrote at install; only the source tree compiles);
* **shared cache**: ``PYTHONPYCACHEPREFIX`` set to a folder that one warm-up process filled.

It prints the mean CPU seconds (user + system, from the children's rusage) of each, and the
paired ratio cache / no cache with its 95 % interval over repeats.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ci import (PROCESS_CASES as CASES, alternating, cpu_ratio_line,  # noqa: E402
                 process_case_args, skilleval_process_cpu)

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    args = process_case_args(__doc__)
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE") and not k.startswith("SKILLEVAL_")}
    with tempfile.TemporaryDirectory() as tmp:
        settings = {"no cache": {**base, "PYTHONDONTWRITEBYTECODE": "1"},
                    "shared cache": {**base, "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache")}}
        n = 0

        def run(case: str, name: str) -> float:
            nonlocal n
            n += 1
            env = {**settings[name], "SKILLEVAL_STORE": f"{tmp}/store{n}", "SKILLEVAL_OUTPUTS": f"{tmp}/out"}
            return skilleval_process_cpu(CASES[case], env, ROOT)

        for case in args.cases.split(","):
            run(case, "shared cache")  # the warm-up that fills the cache
            cpu = alternating({name: (lambda name=name, case=case: run(case, name)) for name in settings},
                              args.repeats)
            print(cpu_ratio_line(case, cpu, "shared cache", "no cache"))


if __name__ == "__main__":
    main()
