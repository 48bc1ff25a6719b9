"""Installing a skill folder where an agent looks for it (``.claude/skills/<name>``), as the
user has it: resource files copied, SKILL.md byte for byte, or with only the description
replaced for a candidate wording."""
from __future__ import annotations

import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any

from skilleval.domain import Skill
from skilleval.errors import UserError
from skilleval.paths import contained
from skilleval.skills import described_anew, render_frontmatter, resource_files, split_frontmatter


def install_skill(skill: Skill, dest: Path) -> None:
    """Install `skill` as a real skill folder at `dest`: its resource files copied, and its
    SKILL.md as the user wrote it, or, for a candidate description, the original frontmatter
    with only the description replaced."""
    dest.mkdir(parents=True, exist_ok=True)
    if skill.path is not None and skill.path.is_dir():  # (a Skill built in code has no folder)
        for f in resource_files(skill.path):
            if not f.is_file() or f.is_symlink() and not f.resolve().is_relative_to(skill.path):
                continue
            target = contained(dest, f.relative_to(skill.path))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, target)  # with its mode: a script the skill runs stays executable
    original = None if skill.path is None else skill.path / "SKILL.md" if skill.path.is_dir() else skill.path
    if original is not None and original.is_file() and _file_description(original) == skill.description:
        shutil.copyfile(original, dest / "SKILL.md")  # the user's file, byte for byte
        return
    if original is not None and original.is_file() and skill.frontmatter.get("name") == skill.name:
        try:  # the user's file with only the description replaced (comments, spelling kept)
            st = original.stat()
            text = _described(str(original), st.st_ino, st.st_mtime_ns, st.st_size, skill.description)
        except (UserError, UnicodeDecodeError):
            pass  # a layout that cannot be edited in place: the frontmatter re-rendered below
        else:
            contained(dest, "SKILL.md").write_bytes(text.encode("utf-8"))
            return
    fm = {**skill.frontmatter, "name": skill.name, "description": skill.description}
    contained(dest, "SKILL.md").write_text(f"---\n{render_frontmatter(fm)}---\n{skill.body}", encoding="utf-8")


SKILLS_DIR = ".claude/skills"  # where an agent finds installed skills, relative to its folder


def install_skills(skills: Any, workdir: Path) -> None:
    """`skills` installed as real skill folders (resources included) under
    ``workdir/.claude/skills/<name>``, where Claude Code looks for project skills; both
    executors install them there, and the API executor's ``load_skill`` names that folder as
    Claude Code's Skill tool does, so a skill's scripts/ and references/ can be read."""
    skills_dir = workdir / SKILLS_DIR
    skills_dir.mkdir(parents=True, exist_ok=True)
    for s in skills:
        install_skill(s, contained(skills_dir, s.name))


def _file_description(md: Path) -> str | None:
    """The description SKILL.md holds on disk (`Skill.with_description` changes only memory).
    Cached by the file's identity and mtime: a claude_cli trial installs every listed skill,
    and parsing each one's YAML again was most of this process's CPU per trial (about 6 ms of
    0.45 s; the cores it takes are the CLIs'). An edited file has another mtime or size."""
    try:
        st = md.stat()
    except OSError:
        return None
    return _parsed_description(str(md), st.st_ino, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def _described(md: str, _ino: int, _mtime_ns: int, _size: int, description: str) -> str:
    """SKILL.md's text with only the description replaced (cached as `_file_description`: a
    candidate wording is installed for every one of its trials)."""
    return described_anew(Path(md).read_bytes().decode("utf-8"), description, Path(md))


@lru_cache(maxsize=256)
def _parsed_description(md: str, _ino: int, _mtime_ns: int, _size: int) -> str | None:
    try:
        fm, _ = split_frontmatter(Path(md).read_text(encoding="utf-8"), Path(md))
    except (OSError, UnicodeDecodeError, UserError):
        return None
    value = fm.get("description")
    return value.strip() if isinstance(value, str) else None

