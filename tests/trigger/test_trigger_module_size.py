"""The house limit: every module of `skilleval.trigger` stays within 400 lines."""
from __future__ import annotations

from pathlib import Path

TRIGGER = Path(__file__).resolve().parents[2] / "skilleval" / "trigger"


def test_trigger_modules_are_at_most_400_lines() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in TRIGGER.glob("*.py")}
    assert "runner.py" in sizes and "trial_rows.py" in sizes
    assert {n: s for n, s in sizes.items() if s > 400} == {}
