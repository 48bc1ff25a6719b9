"""Contained paths: every path built from hostile data (a skill's `name`, a file inside a
skill folder, a model's tool call) goes through `contained`, which refuses to leave its base.

Why a check on the built path and not only on the input: a name can be valid text and still
resolve elsewhere (a symlinked folder inside the sandbox, ``..`` hidden in a relative part),
so the final, resolved location is what is compared with the base.
"""
from __future__ import annotations

import os
from pathlib import Path

from skilleval.errors import UserError


class PathEscape(UserError):
    """A path built from data would land outside the folder it must stay in."""


def contained(base: Path, *parts: str | os.PathLike[str]) -> Path:
    """``base / parts...``, refusing absolute parts, ``..`` and anything that resolves
    (through symlinks) outside `base`. Raises PathEscape naming the offending part."""
    root = Path(base).resolve()
    out = root
    for part in parts:
        text = os.fspath(part)
        rel = Path(text)
        if not text or rel.is_absolute() or "\\" in text or "\0" in text or ".." in rel.parts:
            raise PathEscape(f"path {text!r} would leave {root}")
        out = out / rel
    resolved = out.resolve()
    if resolved != root and not resolved.is_relative_to(root):
        raise PathEscape(f"path {os.fspath(out)!r} resolves to {resolved}, outside {root}")
    return out
