"""Packaging (a real wheel build) and the README's promises."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from spine_helpers import REPO


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_every_package_dir_is_listed() -> None:
    tool = _pyproject()["tool"]["setuptools"]
    listed = set(tool["packages"])
    found = set()
    for d in [REPO / "skilleval", *(p for p in (REPO / "skilleval").rglob("*") if p.is_dir())]:
        if d.name == "__pycache__" or "__pycache__" in d.parts:
            continue
        if any(d.glob("*.py")):
            found.add(".".join(d.relative_to(REPO).parts))
    assert found, "no packages found"
    missing = sorted(found - listed)
    assert not missing, f"package dirs missing from pyproject [tool.setuptools] packages: {missing}"
    # the mapped trees ship too
    assert tool["package-dir"]["skilleval.conf"] == "conf"
    assert tool["package-dir"]["skilleval.examples"] == "experiments"
    assert {"skilleval.conf", "skilleval.examples"} <= listed


def test_wheel_contains_configs_and_examples(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "outputs", ".*")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    for name in ("skilleval", "conf", "experiments"):
        shutil.copytree(REPO / name, src / name, ignore=ignore)
    dist = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "--no-index", str(src), "-w", str(dist)], capture_output=True, text=True,
                       env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    [wheel] = list(dist.glob("skilleval-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = next(zf.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    for needed in ("skilleval/conf/config.yaml", "skilleval/conf/experiment/trigger_eval.yaml",
                   "skilleval/conf/trigger/default.yaml", "skilleval/examples/changelog-writer/SKILL.md",
                   "skilleval/examples/changelog-writer/evals/trigger_eval.json",
                   "skilleval/examples/csv-tidy/SKILL.md", "skilleval/cli.py", "skilleval/store/catalog.py",
                   "skilleval/backends/embed_calibration.json",
                   "skilleval/backends/embed_calibration_set.json"):
        assert needed in names, needed
    assert "skilleval = skilleval.cli:main" in entry_points
    assert "[skilleval]" in entry_points and "skilleval.backends.plugin" in entry_points


def _fenced_lines(text: str) -> list[str]:
    lines, inside = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            inside = not inside
            continue
        if inside:
            lines.append(line.strip())
    return lines


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text()
    commands = [ln for ln in _fenced_lines(readme) if re.search(r"\bpytest\b", ln)]
    assert len(commands) == 1, commands
    ci = (REPO / ".ci" / "run").read_text()
    assert commands[0] in [ln.strip() for ln in ci.splitlines()]
    assert "skilleval +experiment=trigger_opt" in readme
    main_cmd = [ln for ln in _fenced_lines(readme) if ln.startswith("pip install .")]
    assert main_cmd and "skilleval +experiment=trigger_opt" in main_cmd[0]
