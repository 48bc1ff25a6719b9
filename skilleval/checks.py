"""Checks of config values that Hydra's typing cannot make (nodes built from YAML are untyped)."""
from __future__ import annotations

import math
from typing import Any

from skilleval.errors import UserError


def checked_number(key: str, value: Any, kind: type, *, none: bool = False) -> Any:
    """`value` as an int or float, or a UserError naming `key` (a typo such as
    ``trigger.runs=abc`` must exit 2 with one line, not a TypeError traceback)."""
    if value is None and none:
        return None
    # NaN and infinity are numbers to Python but no setting: NaN passes every range check
    # (each comparison is False) and then silently poisons the arithmetic (an embed calibration
    # of intercept=nan made every probability NaN: nothing fired, recall 0, exit 0).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or (kind is int and not float(value).is_integer()):
        want = "a whole number" if kind is int else "a finite number"
        raise UserError(f"{key} must be {want}{' or null' if none else ''}, got {value!r}")
    return kind(value)
