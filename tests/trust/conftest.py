"""Fixtures for the issue-8 trust tests (serve-sim and the CLI runner live in tests/conftest.py)."""
from __future__ import annotations

import pytest

from skilleval.sim.process import locate_claude_cli


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The pinned real claude CLI; missing is a failure, not a skip (a real component)."""
    path, reason = locate_claude_cli()
    if path is None:
        pytest.fail(f"real claude CLI unavailable: {reason}")
    return path
