"""Helpers for the optimiser's tests (imported by name; tests/ has no __init__): a private store and outputs folder per test, and a way
to run `skilleval` (`run`: a process forked from a warm interpreter, tests/forked_cli.py; `popen`:
the real console script, for runs a test interrupts)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import forked_cli

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "experiments" / "changelog-writer"


def skilleval_cmd() -> list[str]:
    exe = shutil.which("skilleval")
    return [exe] if exe else [sys.executable, "-m", "skilleval.cli"]


class Cli:
    def __init__(self, tmp: Path) -> None:
        self.store = tmp / "store"
        self.outputs = tmp / "outputs"
        self.env = {**os.environ, "SKILLEVAL_STORE": str(self.store),
                    "SKILLEVAL_OUTPUTS": str(self.outputs), "NO_COLOR": "1", "COLUMNS": "200"}

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return forked_cli.run(list(args), cwd=self.store.parent, env=self.env, timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([*skilleval_cmd(), *args], env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=self.store.parent)

    def results(self) -> list[dict]:
        """Every results.json written so far, oldest first."""
        files = sorted(self.outputs.rglob("results.json"), key=lambda p: p.stat().st_mtime)
        return [json.loads(p.read_text()) for p in files]

    def sql(self, query: str) -> list[dict]:
        """Query the store in-process (real DuckDB over the real Parquet parts)."""
        from skilleval.store.catalog import Store

        import skilleval.optimize.state  # noqa: F401 - registers the optimiser's tables

        return Store(self.store).query(query).to_pylist()


def make_skill(root: Path, name: str = "demo-skill", description: str | None = "Does demo things.",
               cases: list[dict] | None = None) -> Path:
    d = root / name
    (d / "evals").mkdir(parents=True)
    fm = f"name: {name}\n" + (f"description: {description}\n" if description is not None else "")
    (d / "SKILL.md").write_text(f"---\n{fm}---\n\n# Demo\n\nDo demo things with widgets.\n")
    if cases is not None:
        (d / "evals" / "trigger_eval.json").write_text(json.dumps(cases))
    return d
