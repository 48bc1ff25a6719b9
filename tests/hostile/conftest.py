"""Hostile-input suite: real hostile files, a real hostile model (serve-sim's hostile knobs)
and really damaged stores. Every case must end in exit 2 or 3 with one line, or in a correct
run; and nothing outside the sandbox or store may be created or changed (the canary tree)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest


class Canary:
    """A tree of files a hostile input would like to touch; `assert_untouched` compares a
    snapshot of every path (content hash, mode, link target) with the one taken at creation."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "other-skill").mkdir(parents=True)
        (root / "other-skill" / "SKILL.md").write_text(
            "---\nname: other-skill\ndescription: Someone else's skill.\n---\n# Other\n")
        (root / "secret.txt").write_text("CANARY-SECRET-7f3a\n")
        (root / "notes").mkdir()
        (root / "notes" / "keep.md").write_text("keep me\n")
        self.before = self.snapshot()

    def snapshot(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                rel = p.relative_to(self.root).as_posix()
                if p.is_symlink():
                    out[rel] = "link:" + os.readlink(p)
                elif p.is_file():
                    out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() + f":{p.stat().st_mode:o}"
                else:
                    out[rel] = "dir"
        return out

    def assert_untouched(self) -> None:
        after = self.snapshot()
        added = sorted(set(after) - set(self.before))
        removed = sorted(set(self.before) - set(after))
        changed = sorted(k for k in set(after) & set(self.before) if after[k] != self.before[k])
        assert not (added or removed or changed), f"canary tree touched: added {added}, " \
                                                  f"removed {removed}, changed {changed}"


@pytest.fixture
def canary(tmp_path: Path) -> Canary:
    return Canary(tmp_path / "canary")
