"""Helpers shared by test folders (a module, not conftest.py: several conftest.py files
exist, and `import conftest` would pick whichever pytest loaded first)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def install_plugin(name: str, tmp: Path) -> Path:
    """pip-install `plugins/<name>` (from a copy, so the repo stays clean) into a target
    folder and return it; put it on PYTHONPATH to use the plugin, nothing else changes."""
    repo = Path(__file__).resolve().parents[1]
    src = tmp / "src"
    shutil.copytree(repo / "plugins" / name, src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                        "--no-index", "--target", str(site), str(src)], capture_output=True, text=True,
                       env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    return site
