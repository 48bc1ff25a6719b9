"""Issue 11: the example GitHub Actions workflow (docs/ci-example.yml), run locally.

The steps marked ``id: eval`` and ``id: diff`` run as written, in bash, with the real
``claude`` CLI pointed at serve-sim (the only additions: the simulator's URL and model, and
a six-query eval set to keep it short). A main-branch run, then a pull request that keeps the
description (green), then one that breaks it (red, one line per failed gate)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import xmlschema
import yaml

from skilleval.sim.process import locate_claude_cli

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "docs" / "ci-example.yml"


def _steps() -> dict[str, dict]:
    doc = yaml.safe_load(WORKFLOW.read_text())
    job = next(iter(doc["jobs"].values()))
    return job, {s["id"]: s for s in job["steps"] if "id" in s}


def _run_step(step: dict, cwd: Path, env: dict[str, str], extra: str) -> subprocess.CompletedProcess[str]:
    script = step["run"].replace("skilleval +experiment=trigger_eval",
                                 f"skilleval +experiment=trigger_eval {extra}")
    return subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_example_workflow_against_serve_sim(tmp_path: Path, sim) -> None:  # noqa: ANN001
    claude, reason = locate_claude_cli()
    assert claude is not None, f"the pinned claude CLI is required for this test: {reason}"
    job, steps = _steps()
    assert {"eval", "diff"} <= set(steps)
    # a repository with the skill where the workflow expects it
    skill = tmp_path / job["env"]["SKILL_DIR"]
    shutil.copytree(REPO / "experiments" / "csv-tidy", skill)
    rows = json.loads((skill / "evals" / "trigger_eval.json").read_text())
    (skill / "evals" / "trigger_eval.json").write_text(json.dumps(rows[:3] + rows[14:17]))
    # `skilleval` and `claude` on PATH, as the install step leaves them
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "skilleval").write_text(f"#!/bin/sh\nexec {sys.executable} -m skilleval.cli \"$@\"\n")
    (bindir / "skilleval").chmod(0o755)
    (bindir / "claude").symlink_to(claude)
    summary = tmp_path / "step_summary.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLEVAL_", "HYDRA_"))}
    env.update(PATH=f"{bindir}{os.pathsep}{env['PATH']}", SKILL_DIR=job["env"]["SKILL_DIR"],
               SKILLEVAL_STORE=str(tmp_path / ".skilleval-store"), SKILLEVAL_OUTPUTS=str(tmp_path / "out"),
               ANTHROPIC_API_KEY="sk-ant-api03-FAKEKEYFORTESTS-0123456789abcdef",
               GITHUB_STEP_SUMMARY=str(summary), NO_COLOR="1", COLUMNS="160")
    extra = f"backend.base_url={sim.url} backend.model=sim-1 trigger.runs=1"

    # 1. main: no earlier run, so the regression gate says so and is not checked
    main = _run_step(steps["eval"], tmp_path, env, extra)
    assert main.returncode == 0, main.stdout + main.stderr
    assert "no earlier run" in main.stderr
    report = tmp_path / "skilleval-report"
    xmlschema.XMLSchema(str(Path(__file__).with_name("junit.xsd"))).validate(str(report / "junit.xml"))
    assert "Gates: passed" in summary.read_text()

    # 2. a pull request that keeps the description: green, compared with main's run
    shutil.rmtree(report)
    pr = _run_step(steps["eval"], tmp_path, env, extra)
    assert pr.returncode == 0, pr.stdout + pr.stderr
    assert "gate passed: accuracy change vs baseline" in pr.stdout
    d = _run_step(steps["diff"], tmp_path, env, extra)
    assert d.returncode == 0, d.stderr
    assert json.loads((report / "diff.json").read_text())["flipped"] == {"fixed": [], "regressed": []}

    # 3. a pull request that breaks the description: red, one line per failed gate
    md = skill / "SKILL.md"
    lines = md.read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("description:"))
    lines[i] = "description: Helps with files."
    md.write_text("\n".join(lines) + "\n")
    bad = _run_step(steps["eval"], tmp_path, env, extra)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    failed = [ln for ln in bad.stderr.splitlines() if "gate FAILED" in ln]
    assert failed and all(ln.startswith("skilleval: gate FAILED: ") for ln in failed)
    assert any("recall" in ln for ln in failed)
    assert "Gates: FAILED" in summary.read_text()
