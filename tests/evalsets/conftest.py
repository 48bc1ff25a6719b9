"""Fixtures shared by the eval-set page tests: one headless Debian chromium per module."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

CHROMIUM = os.environ.get("SKILLEVAL_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():
        pytest.fail(f"chromium not found at {CHROMIUM}: install Debian's chromium (the review page "
                    "is tested in a real browser, not skipped)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        yield b
        b.close()
