"""SKILL.md: parse, validate (skill-creator's rules, fixed), write back, package.

One real YAML parser serves every use (skill-creator uses a hand-written line parser for
evaluation and PyYAML for validation, and they disagree on multi-line descriptions).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from skilleval.domain import Skill
from skilleval.errors import UserError
from skilleval.textfiles import first_surrogate, shown_name, surrogate_problem

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
ALLOWED_KEYS = frozenset({"name", "description", "license", "allowed-tools", "metadata", "compatibility"})
# Keys Claude Code reads beyond the Agent Skills spec: warned about, never fatal.
CLAUDE_CODE_KEYS = frozenset({
    "argument-hint", "disable-model-invocation", "user-invocable", "context", "agent",
    "model", "hooks", "when_to_use", "version",
})
MAX_NAME = 64
MAX_DESCRIPTION = 1024


def name_problem(name: object) -> str | None:
    """Why `name` cannot be a skill name, or None. Names become folder names
    (``.claude/skills/<name>``), so anything but kebab-case is refused wherever a skill loads."""
    if not isinstance(name, str):
        return f"'name' must be a string, got {type(name).__name__}"
    name = name.strip()
    if not name:
        return "'name' is empty"
    if not _NAME.match(name):
        return (f"name {name[:80]!r} must be kebab-case: lowercase letters, digits and single "
                "hyphens (no path separators)")
    if len(name) > MAX_NAME:
        return f"name is {len(name)} characters; at most {MAX_NAME}"
    return None


def skill_md_path(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "SKILL.md"
    if not p.is_file():
        where = p.parent if p.name == "SKILL.md" else p
        if not where.exists():
            raise UserError(f"skill folder not found: {where}")
        raise UserError(f"{p}: no SKILL.md in the skill folder")
    return p


def _read_skill_md(md: Path) -> str:
    try:
        return md.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{md}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys silently; a frontmatter saying `name` twice
    is ambiguous (which one does Claude see?), so it is an error naming the key and line.

    Aliases (``*name``) are refused too: nine nested levels of a 396-byte "billion laughs"
    file expand to ~400 M nodes that every walk over the document (the surrogate check, a
    hash, JSON) visits one by one, which hung ``validate`` and every run."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.events.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"alias *{event.anchor} (YAML anchors and aliases are not "
                "supported here)", event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:  # the base class reports unhashable keys itself
                continue
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def yaml_problem(exc: yaml.YAMLError, first_line: int = 1) -> str:
    """PyYAML's error as one line with where it is: "mapping values are not allowed here at
    line 2 column 9" (its message spreads that over several lines, and the first says no
    place). `first_line`: the file's line number of the parsed text's first line."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or next(iter(str(exc).strip().splitlines()), type(exc).__name__)
    return problem if mark is None else f"{problem} at line {mark.line + first_line} column {mark.column + 1}"


def split_frontmatter(text: str, source: Path) -> tuple[dict[str, Any], str]:
    """(frontmatter mapping, body) of a SKILL.md text; UserError naming `source` otherwise."""
    text = text.lstrip("\ufeff")
    match = _FRONTMATTER.match(text)
    if not match:
        raise UserError(f"{source}: missing YAML frontmatter (the file must start with a '---' "
                        "line and close it with another '---' line)")
    try:
        data = yaml.load(match.group(1), Loader=UniqueKeyLoader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:  # the frontmatter starts on the file's line 2
        raise UserError(f"{source}: malformed YAML frontmatter: {yaml_problem(exc, 2)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(f"{source}: frontmatter must be a mapping of keys, got {type(data).__name__}")
    found = first_surrogate(data)
    if found:
        raise UserError(f"{source}: frontmatter {found[0]} {found[1]}")
    return data, text[match.end():]


def load_skill(path: str | Path) -> Skill:
    """Parse a skill folder (or its SKILL.md). Name and description must be strings."""
    md = skill_md_path(path)
    fm, body = split_frontmatter(_read_skill_md(md), md)
    for key in ("name", "description"):
        if key not in fm:
            raise UserError(f"{md}: frontmatter has no '{key}'")
        if not isinstance(fm[key], str):
            raise UserError(f"{md}: '{key}' must be a string, got {type(fm[key]).__name__}")
    problem = name_problem(fm["name"])
    if problem:
        raise UserError(f"{md}: {problem}")
    description = fm["description"].strip()
    if not description:
        raise UserError(f"{md}: 'description' is empty")
    root = md.parent.resolve()
    return Skill(fm["name"].strip(), description, body, root, fm, resources_hash(root))


def resource_files(root: Path) -> list[Path]:
    """The skill's files besides SKILL.md, as `package` would ship them."""
    return [f for f in package_files(root) if f.relative_to(root).as_posix() != "SKILL.md"]


def resources_hash(root: Path) -> str:
    """What the skill's other files hold, executable bits included: a script that can be run
    is a different skill from one that cannot (`install_skill` keeps the bit). A file that is
    not executable hashes as it did before the bit counted, so stored trials stay valid."""
    h = hashlib.sha256()
    files = resource_files(root)
    for f in files:
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\1")
        if f.stat().st_mode & 0o111:
            h.update(b"\2x")
    return h.hexdigest()[:16] if files else ""


#: skill-creator: "SKILL.md body (ideally under 500 lines) loads on trigger"
MAX_BODY_LINES = 500


@dataclass(frozen=True)
class Problem:
    level: str  # "error" | "warning"
    message: str

    def located(self, md: Path) -> str:
        """The message with where it is: `md` (the SKILL.md validated), unless it is about
        another file of the skill, whose message names that file itself."""
        return self.message if self.message.startswith(f"{md.parent}{os.sep}") else f"{md}: {self.message}"


def validate_skill(path: str | Path) -> list[Problem]:
    """skill-creator's quick_validate rules, plus the gaps it leaves (see reference §12.1)."""
    md = skill_md_path(path)
    fm, body = split_frontmatter(_read_skill_md(md), md)
    problems: list[Problem] = []
    err = lambda m: problems.append(Problem("error", m))  # noqa: E731
    lines = len(body.splitlines())
    if lines > MAX_BODY_LINES:  # loaded whole on every trigger: skill-creator's guidance
        problems.append(Problem("warning", f"the body is {lines:,} lines; skill-creator advises "
                                           f"under {MAX_BODY_LINES} (it is loaded whole whenever "
                                           "the skill triggers): move detail into files it links"))
    for key in sorted(set(fm) - ALLOWED_KEYS):
        if key in CLAUDE_CODE_KEYS:
            problems.append(Problem("warning", f"'{key}' is a Claude Code extension, not part of "
                                               "the Agent Skills spec; other clients may ignore it"))
        else:
            err(f"unexpected key '{key}'; allowed: {', '.join(sorted(ALLOWED_KEYS))}")
    name, desc = fm.get("name"), fm.get("description")
    if name is None:
        err("missing 'name'")
    elif not isinstance(name, str):
        err(f"'name' must be a string, got {type(name).__name__}")
    else:
        name = name.strip()
        if not name:
            err("'name' is empty")
        elif not _NAME.match(name):
            err(f"name {name[:80]!r} must be kebab-case: lowercase letters, digits and single hyphens")
        if len(name) > MAX_NAME:
            err(f"name is {len(name)} characters; at most {MAX_NAME}")
        if name and name != md.parent.name:
            err(f"name '{name}' does not match the folder name '{md.parent.name}'")
    if desc is None:
        err("missing 'description'")
    elif not isinstance(desc, str):
        err(f"'description' must be a string, got {type(desc).__name__}")
    else:
        desc = desc.strip()
        if not desc:
            err("'description' is empty")
        for problem, _ in description_problems(desc):
            err(problem)
    comp = fm.get("compatibility")
    if comp and (not isinstance(comp, str) or len(comp) > 500):
        err("'compatibility' must be a string of at most 500 characters")
    try:  # the folder's files: what a run and `package` refuse, validate refuses too
        package_files(md.parent)
    except UserError as exc:
        err(str(exc))
    return problems


def description_problems(desc: str) -> list[tuple[str, str]]:
    """(problem, what follows from it) for each thing the Agent Skills spec refuses in a
    description: `validate` fails a skill for each problem, and a run measures the description
    as written but warns with both (`JobContext.load_skill`)."""
    problems = []
    if "<" in desc or ">" in desc:
        problems.append(("description must not contain '<' or '>'",
                         "skill-creator's validation and skill upload refuse it, so the skill "
                         "cannot ship as measured"))
    controls = sorted({f"\\x{ord(ch):02x}" for ch in desc if (ord(ch) < 32 and ch not in "\t\n")
                       or 0x7f <= ord(ch) <= 0x9f})
    if controls:  # description= and a proposer's candidate are refused for them too
        problems.append((f"description contains control characters ({', '.join(controls)})",
                         "they reach the listing Claude reads, and any terminal that shows it"))
    if len(desc) > MAX_DESCRIPTION:
        problems.append((f"description is {len(desc)} characters; at most {MAX_DESCRIPTION}",
                         "skill-creator says longer ones are truncated, so Claude may not see "
                         "all of what is measured"))
    return problems


def render_frontmatter(frontmatter: dict[str, Any]) -> str:
    """YAML for a frontmatter block: key order kept, long lines unwrapped, quoting as needed."""
    return yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True, width=10_000)


def described_anew(text: str, description: str, source: Path) -> str:
    """SKILL.md's `text` with its description replaced, every other byte kept (comments and
    other keys' spelling included: `frontmatter_edit`). UserError naming `source` when the
    frontmatter's layout cannot be edited in place, or the edit would change another key."""
    from skilleval.frontmatter_edit import NotEditable, replace_value

    text = text.lstrip("\ufeff")
    before, _ = split_frontmatter(text, source)
    match = _FRONTMATTER.match(text)
    assert match is not None  # split_frontmatter refused otherwise
    try:
        fm = replace_value(match.group(1), "description", description)
    except NotEditable as exc:
        raise UserError(f"{source}: cannot replace the description in place: {exc}") from None
    new = text[:match.start(1)] + fm + text[match.end(1):]
    after, _ = split_frontmatter(new, source)
    if after != {**before, "description": description}:  # pragma: no cover - a YAML surprise
        raise UserError(f"{source}: replacing the description in place would change other keys")
    return new


def write_description(path: str | Path, description: str, *, backup_dir: str | Path) -> Path:
    """Replace the description in SKILL.md, keeping every other byte: the other keys as the
    user spelled them, comments, and the body (`described_anew`).

    The previous file is kept as ``<backup_dir>/SKILL.md.bak-<timestamp>``; returns that
    backup's path. `backup_dir` must lie outside the skill folder: a backup inside it would
    be listed, validated and shipped by ``package`` with the skill.
    """
    md = skill_md_path(path)
    folder = md.parent.resolve()
    bdir = Path(backup_dir).expanduser().resolve()
    if bdir == folder or folder in bdir.parents:
        raise ValueError(f"backup folder {bdir} is inside the skill folder {folder}")
    bdir.mkdir(parents=True, exist_ok=True)
    text = md.read_bytes().decode("utf-8")  # no newline translation: the body stays as it is
    new = described_anew(text, description, md)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = bdir / f"SKILL.md.bak-{stamp}"
    n = 1
    while backup.exists():  # two writes within a second must not overwrite the first backup
        backup = bdir / f"SKILL.md.bak-{stamp}-{n}"
        n += 1
    shutil.copy2(md, backup)
    tmp = md.with_name("SKILL.md.tmp")
    tmp.write_bytes(new.encode("utf-8"))
    tmp.replace(md)
    return backup


# -- packaging ------------------------------------------------------------------------------

_EXCLUDED_PARTS = {"__pycache__", "node_modules"}


def _walk(root: Path) -> list[Path]:
    """Every path under `root`, sorted, not following symlinked folders (a link to an
    ancestor would loop forever)."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        out.extend(base / n for n in dirnames + filenames)
    return sorted(out)


def _run_folders(root: Path) -> list[Path]:
    """Folders under `root` that a Hydra run or sweep of skilleval wrote (they hold
    ``.hydra/`` or ``multirun.yaml``), and skilleval's default ``outputs/`` and ``multirun/``
    folders when one of those is inside them."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        if ".hydra" in dirnames or "multirun.yaml" in filenames:
            here = Path(dirpath)
            found.append(here)
            top = root / here.relative_to(root).parts[0] if here != root else None
            if top is not None and top.name in ("outputs", "multirun"):
                found.append(top)
            dirnames[:] = []
        else:  # what package_files leaves out anyway (.git, node_modules) is not walked
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in _EXCLUDED_PARTS]
    return found


def package_files(root: Path) -> list[Path]:
    """Files that go into a .skill archive, sorted; dotfiles, caches, top-level evals/ and
    skilleval's own run folders left out. Why the last: run from inside the skill folder, a
    run writes its outputs there; counted as the skill's files, they changed its
    resources_hash, so every rerun's trials missed the store and were paid again, and
    ``package`` shipped the results."""
    files = []
    runs = _run_folders(root)
    for p in _walk(root):
        rel = p.relative_to(root)
        parts = rel.parts
        if any(part.startswith(".") or part in _EXCLUDED_PARTS for part in parts):
            continue
        if any(p == r or r in p.parents for r in runs):
            continue
        if parts[0] == "evals" or p.suffix == ".pyc":
            continue
        if p.is_symlink():
            try:
                target = p.resolve(strict=True)
            except (OSError, RuntimeError):  # a loop or a dangling link
                raise UserError(f"{p}: broken symlink or symlink loop") from None
            if not target.is_relative_to(root.resolve()):
                raise UserError(f"{p}: symlink points outside the skill folder")
            if target.is_dir():
                raise UserError(f"{p}: symlinked folder; package a real folder instead")
        if surrogate_problem(str(rel)):  # os.walk keeps a non-UTF-8 byte as a lone surrogate
            raise UserError(f"{shown_name(str(p))}: the file name is not valid UTF-8 (a .skill "
                            "archive, the store and every page hold names as UTF-8); rename it")
        if p.is_file():
            files.append(p)
    return files
