"""Checks of config values that Hydra's typing cannot make (nodes built from YAML are untyped)."""
from __future__ import annotations

from typing import Any

from skilleval.errors import UserError


def checked_number(key: str, value: Any, kind: type, *, none: bool = False) -> Any:
    """`value` as an int or float, or a UserError naming `key` (a typo such as
    ``trigger.runs=abc`` must exit 2 with one line, not a TypeError traceback)."""
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            (kind is int and not float(value).is_integer()):
        want = "a whole number" if kind is int else "a number"
        raise UserError(f"{key} must be {want}{' or null' if none else ''}, got {value!r}")
    return kind(value)
