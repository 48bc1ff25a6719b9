"""The house limit: every module of the `skilleval` package stays within 400 lines."""
from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "skilleval"


def test_every_module_is_at_most_400_lines() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
             for p in PACKAGE.rglob("*.py")}
    assert "trigger/runner.py" in sizes and len(sizes) > 100
    assert {n: s for n, s in sizes.items() if s > 400} == {}
