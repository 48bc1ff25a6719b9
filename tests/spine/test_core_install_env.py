"""The suite's subprocesses run as a core install has them: without pandas (see
tests/without_pandas/sitecustomize.py for why). These fail if the hiding stops working, or if a
command comes to need pandas, which `pip install .` does not bring."""
from __future__ import annotations

import json
import subprocess
import sys



def test_a_started_python_cannot_import_pandas(skilleval_cli) -> None:  # noqa: ANN001
    probe = subprocess.run([sys.executable, "-c", "import pandas"], env=skilleval_cli.env,
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode != 0 and "hidden by tests/without_pandas" in probe.stderr


def test_a_run_writes_and_reads_its_store_without_pandas(skilleval_cli) -> None:  # noqa: ANN001
    run = skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", check=0)
    assert "Traceback" not in run.stderr
    listed = len(json.loads(next(skilleval_cli.outputs.rglob("results.json")).read_text())["results"])
    rows = skilleval_cli.run("sql", "select count(*) as n from trials", check=0)
    assert listed > 0 and f"│ {listed} │" in rows.stdout
