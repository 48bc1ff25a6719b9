"""The eval-set page tests use the viewer tests' headless Debian chromium (one per module)."""
from __future__ import annotations

from tests.viewer.conftest import browser  # noqa: F401  (a fixture, found by name)
