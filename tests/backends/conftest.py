"""Fixtures: the pinned real claude CLI (serve-sim fixtures live in tests/conftest.py)."""
from __future__ import annotations

import pytest

from skilleval.sim.process import locate_claude_cli


@pytest.fixture(scope="session")
def claude_bin() -> str:
    path, reason = locate_claude_cli()
    if path is None:
        pytest.skip(f"real claude CLI unavailable: {reason}")
    return path
