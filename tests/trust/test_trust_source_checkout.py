"""Issue 8 item 13: scripts in a source checkout (benchmarks/*.py, `python -m skilleval.cli`
from the repo root) work with a non-editable install, where nothing maps `conf/` to
`skilleval.conf` and `experiments/` to `skilleval.examples` but the package itself."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from trust_helpers import REPO

# Drop every editable-install finder, then import skilleval from the source tree: exactly what
# `python benchmarks/x.py` sees after `pip install .` (the script puts the checkout first).
PRELUDE = textwrap.dedent(f"""
    import runpy, sys
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, {str(REPO)!r})
    import skilleval
    assert skilleval.__file__.startswith({str(REPO)!r}), skilleval.__file__
""")


def test_hydra_run_from_a_source_checkout_without_an_editable_install(tmp_path) -> None:  # noqa: ANN001
    code = PRELUDE + textwrap.dedent("""
        sys.argv = ["skilleval", "+experiment=trigger_eval", "trigger.runs=1", "progress=false",
                    "reporter.console.show_queries=false"]
        runpy.run_module("skilleval.cli", run_name="__main__")
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLEVAL_", "HYDRA_"))}
    env.update(SKILLEVAL_STORE=str(tmp_path / "store"), SKILLEVAL_OUTPUTS=str(tmp_path / "out"))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "not found" not in r.stderr
    assert list((tmp_path / "out").rglob("results.json"))


def test_a_benchmark_script_runs_from_the_checkout(tmp_path) -> None:  # noqa: ANN001
    code = PRELUDE + textwrap.dedent(f"""
        sys.argv = ["policy_bias.py", "--runs", "2"]
        runpy.run_path({str(REPO / 'benchmarks' / 'policy_bias.py')!r}, run_name="__main__")
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "verdicts identical: True" in r.stdout
