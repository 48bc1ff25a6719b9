"""Fixtures for the optimiser's tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from opt_helpers import Cli


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    c = Cli(tmp_path)
    c.store.mkdir()
    return c
