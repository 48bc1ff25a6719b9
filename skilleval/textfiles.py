"""Reading user files that may be hostile: not UTF-8, not JSON, nested past any reason.

Each failure is a UserError naming the file (and where in it), never a UnicodeDecodeError or
RecursionError traceback.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skilleval.errors import UserError

def read_text_file(path: Path) -> str:
    """The file's text (UTF-8, a BOM dropped); UserError when unreadable or not UTF-8."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None


def parse_json(text: str, where: str) -> Any:
    """`json.loads(text)`, or a UserError saying what is wrong at `where`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:  # the C decoder's guard against absurd nesting
        raise UserError(f"{where}: JSON nested too deeply to read") from None


def load_json_file(path: Path) -> Any:
    return parse_json(read_text_file(path), str(path))
