"""What a `skilleval` process imports before it is asked for anything.

`--version`, `--help` and input refused before any call must not load the store's libraries
(pyarrow, DuckDB, numpy: about half a second per process): plugins register factories as
``"module:attribute"`` strings and params from light modules (hookspecs.py), and the store is
imported where a job opens it. A job's store writes must not import pandas either (pyarrow
asks for it at its first conversion; `skilleval.store.pandas_probe`), while pandas stays
usable afterwards.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pyarrow", "duckdb", "numpy")
# tests/conftest.py puts this folder on the started processes' PYTHONPATH (it hides pandas);
# named here, not imported: under xdist, ``conftest`` may be another folder's module
WITHOUT_PANDAS = Path(__file__).resolve().parents[1] / "without_pandas"

# Calls the CLI's main() in this process, keeping its exit code; a program adds what it prints.
CALL_MAIN = """
import json, sys
from skilleval.cli import main
try:
    main(sys.argv[1:])
    code = 0
except SystemExit as exc:
    code = exc.code
"""
# ... the exit code and the heavy modules it loaded
PROGRAM = CALL_MAIN + """
print(json.dumps({"code": code, "loaded": [m for m in %r if m in sys.modules]}))
"""


def _run(cli, program: str, *args: str, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-c", program, *args], cwd=cli.cwd,
                          env={**cli.env, **(env or {})}, capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip(), f"no output (exit {proc.returncode})\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args, code", [
    (["--version"], 0),
    (["--help"], 0),
    (["+experiment=trigger_eval", "trigger.runs=0"], 2),  # refused by the config checks
    (["+experiment=trigger_eval", "trigger.rnus=3"], 2),  # refused by the strict keys
    (["+experiment=trigger_eval", "skill=no-such-skill"], 2),  # refused by check_inputs
])
def test_version_help_and_refused_input_load_no_store_library(skilleval_cli, args, code) -> None:
    out = _run(skilleval_cli, PROGRAM % (HEAVY,), *args)
    assert out["code"] == code
    assert out["loaded"] == [], f"skilleval {' '.join(args)} imported {out['loaded']}"


def test_version_still_lists_every_builtin_plugin(skilleval_cli) -> None:
    """Registering by string must not lose a registration: --version names them all."""
    r = skilleval_cli.run("--version", check=0)
    for entry in ("backend=stub", "backend=embed", "experiment=trigger_eval", "experiment=trigger_opt",
                  "experiment=draft_evals", "proposer=llm", "proposer=stub", "reporter=console",
                  "reporter=json", "splitter=stratified", "executor=local", "judge=llm_grader"):
        assert entry in r.stdout


JOB_THEN_PANDAS = CALL_MAIN + """
during = "pandas" in sys.modules
import pyarrow as pa
frame = pa.table({"x": [1, None]}).to_pandas()  # pandas on demand, after the job
print(json.dumps({"code": code, "pandas_during_job": during, "frame": type(frame).__name__,
                  "rows": len(frame)}))
"""


def test_a_job_writes_its_store_without_importing_pandas_and_pandas_still_works(skilleval_cli) -> None:
    # This one test lets its process see pandas (the suite hides it from the others): the
    # point is a user who has pandas installed. pandas comes with the test extra.
    assert importlib.util.find_spec("pandas") is not None, "pandas is missing: pip install -e '.[test]'"
    assert str(WITHOUT_PANDAS) in os.environ.get("PYTHONPATH", "").split(os.pathsep)
    path = os.pathsep.join(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                           if p and p != str(WITHOUT_PANDAS))
    out = _run(skilleval_cli, JOB_THEN_PANDAS, "+experiment=trigger_eval", "trigger.runs=1",
               "progress=false", env={"PYTHONPATH": path})
    assert out["code"] == 0
    assert any(skilleval_cli.store.glob("trials/**/*.parquet")), "the job wrote no trials"
    assert out["pandas_during_job"] is False
    assert (out["frame"], out["rows"]) == ("DataFrame", 2)
