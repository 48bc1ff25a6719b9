"""Reading a skill-creator workspace as hostile data (for ``skilleval import``).

Only regular files that really lie inside the workspace are read: a symlink (to a file or a
folder) that leads outside, a device or a FIFO is skipped and reported, never copied into
the store's blobs. ``grading.json`` / ``timing.json`` / ``eval_metadata.json`` are checked
field by field, so a malformed one is one line naming the file and the field (exit 2), not a
TypeError traceback or a silently empty record.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from skilleval.errors import UserError
from skilleval.textfiles import parse_json

_NUMBER = (int, float)
# file kind -> dotted field -> allowed types (absent or null is always fine)
FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "grading.json": {
        "expectations": (list,), "assertions": (list,), "claims": (list,),
        "execution_metrics": (dict,), "execution_metrics.tool_calls": (dict,),
        "execution_metrics.total_tool_calls": (int,), "execution_metrics.total_steps": (int,),
        "execution_metrics.errors_encountered": (int,),
        "timing": (dict,), "timing.total_duration_seconds": _NUMBER,
        "timing.grader_duration_seconds": _NUMBER,
    },
    "timing.json": {"total_duration_seconds": _NUMBER, "total_tokens": (int,)},
    "eval_metadata.json": {"eval_id": (int, str), "eval_name": (str, int), "prompt": (str,)},
}


class WorkspaceFiles:
    """Reads files under `root`, keeping a list of what it refused to read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = root.resolve()
        self.skipped: list[str] = []

    def _label(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def regular(self, path: Path) -> bool:
        """True when `path` is a regular file (not a symlink) inside the workspace."""
        try:
            st = path.lstat()
        except OSError:
            return False
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode) or \
                not path.resolve().is_relative_to(self.real_root):
            self.skipped.append(self._label(path))
            return False
        return True

    def outputs(self, out_dir: Path) -> list[Path]:
        """Regular files under `out_dir`, sorted; symlinked folders are not entered."""
        if not out_dir.is_dir() or out_dir.is_symlink() and not out_dir.resolve().is_relative_to(self.real_root):
            return []
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(out_dir, followlinks=False):
            base = Path(dirpath)
            for d in dirnames:
                if (base / d).is_symlink():
                    self.skipped.append(self._label(base / d))
            found.extend(f for f in (base / n for n in filenames) if self.regular(f))
        return sorted(found)

    def text(self, path: Path) -> str | None:
        if not path.exists() and not path.is_symlink():
            return None
        if not self.regular(path):
            return None
        return path.read_bytes().decode("utf-8", errors="replace")

    def record(self, path: Path) -> dict[str, Any]:
        """A checked JSON object (empty when the file is absent)."""
        if not path.exists() and not path.is_symlink():
            return {}
        if not self.regular(path):
            return {}
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UserError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
        data = parse_json(text, str(path))
        if not isinstance(data, dict):
            raise UserError(f"{path}: expected a JSON object, got {type(data).__name__}")
        for dotted, kinds in FIELDS.get(path.name, {}).items():
            value: Any = data
            for part in dotted.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, kinds):
                want = " or ".join("a whole number" if k is int else "a number" if k is float else
                                   f"a {k.__name__}" for k in kinds)
                raise UserError(f"{path}: '{dotted}' must be {want}, got {str(value)[:60]!r}")
        return data
