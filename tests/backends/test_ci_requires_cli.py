"""In CI a real-CLI test fails when the CLI is missing; elsewhere it skips and says why."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ONE_CLI_TEST = "tests/backends/test_claude_cli.py::test_bad_flag_exit_code_is_an_error"


def _pytest(ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_XDIST_WORKER")}
    env["SKILLEVAL_CLAUDE_BIN"] = str(REPO / "no-such-claude-binary")
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", ONE_CLI_TEST, "-q", "-p", "no:xdist",
                           "-p", "no:cacheprovider", "-rs"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def test_missing_cli_fails_in_ci() -> None:
    p = _pytest("true")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "real claude CLI unavailable in CI" in p.stdout


def test_missing_cli_skips_with_the_reason_outside_ci() -> None:
    p = _pytest(None)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 skipped" in p.stdout and "no-such-claude-binary is not executable" in p.stdout
