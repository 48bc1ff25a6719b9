"""A trigger eval set as editable rows: read leniently, validate strictly, write atomically.

`skilleval.datasets.load_trigger_cases` is what experiments use, and it refuses a duplicate
query outright. Drafting, checking and reviewing need to *see* a flawed set (to name its
duplicates), so this module reads the raw rows, keeping every extra key (``id``,
``rationale``, ``span``, ``source``, ``split``). Writing goes through `validate_rows`: the
result is skill-creator's format (a JSON array of ``{query, should_trigger}``), with the
extra keys skill-creator ignores.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

from skilleval.atomic import write_text_atomic
from skilleval.datasets import DEFAULT_NAMES, SPLITS
from skilleval.errors import UserError

#: Keys written after query/should_trigger, in this order; other keys are kept after them.
EXTRA_KEYS = ("id", "rationale", "span", "source", "split")
MAX_QUERY_CHARS = 4000


def existing_set(skill_dir: Path) -> Path | None:
    """The skill's eval set file (``evals/trigger_eval.json``, skill-creator's
    ``evals/trigger_evals.json`` or ``.jsonl``), or None."""
    for name in DEFAULT_NAMES:
        p = skill_dir / "evals" / name
        if p.is_file():
            return p
    return None


def resolve_set_path(path: str | Path) -> tuple[Path, Path | None]:
    """(eval set file, skill folder or None) from a file path or a skill folder path."""
    p = Path(path).expanduser()
    if p.is_dir():
        found = existing_set(p)
        if found is None:
            names = ", ".join(f"evals/{n}" for n in DEFAULT_NAMES)
            raise UserError(f"{p}: no eval set found (looked for {names}); draft one: "
                            f"skilleval +experiment=draft_evals skill={p}")
        return found, p if (p / "SKILL.md").is_file() else None
    if not p.is_file():
        raise UserError(f"eval set not found: {p}")
    skill = p.parent.parent if p.parent.name == "evals" and (p.parent.parent / "SKILL.md").is_file() else None
    return p, skill


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every entry as a dict; only the shape is checked (object with a string query and a
    boolean should_trigger), so duplicates and imbalance reach the checks."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    entries: list[tuple[str, Any]] = []
    if path.suffix == ".jsonl":
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    entries.append((f"line {lineno}", json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise UserError(f"{path}: line {lineno}: invalid JSON: {exc.msg}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
        if isinstance(data, dict) and isinstance(data.get("queries"), list):
            data = data["queries"]
        if not isinstance(data, list):
            raise UserError(f"{path}: expected a JSON array of {{query, should_trigger}} objects, "
                            f"got {type(data).__name__}")
        entries = [(f"entry {i}", e) for i, e in enumerate(data)]
    rows = []
    for label, e in entries:
        if not isinstance(e, dict):
            raise UserError(f"{path}: {label}: expected an object, got {type(e).__name__}")
        if not isinstance(e.get("query"), str):
            raise UserError(f"{path}: {label}: 'query' must be a string")
        if not isinstance(e.get("should_trigger"), bool):
            raise UserError(f"{path}: {label}: 'should_trigger' must be true or false")
        rows.append(dict(e))
    return rows


def validate_rows(rows: Any, where: str = "eval set") -> list[dict[str, Any]]:
    """Clean rows ready to write, or a UserError naming the first bad entry.

    Rules: a list of objects; ``query`` a non-empty string (trimmed) of at most
    MAX_QUERY_CHARS characters; ``should_trigger`` a boolean; no two queries the same after
    trimming (skill-creator would merge them silently); extra keys that skill-creator
    ignores are kept if they are strings (``split`` one of train/validation/test); ids are
    unique, and given to rows that lack one.
    """
    if not isinstance(rows, list):
        raise UserError(f"{where}: expected a list of entries")
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise UserError(f"{where}: entry {i}: expected an object")
        query = row.get("query")
        if not isinstance(query, str) or not query.strip():
            raise UserError(f"{where}: entry {i}: 'query' must be a non-empty string")
        query = query.strip()
        if len(query) > MAX_QUERY_CHARS:
            raise UserError(f"{where}: entry {i}: query is {len(query)} characters (limit {MAX_QUERY_CHARS})")
        if not isinstance(row.get("should_trigger"), bool):
            raise UserError(f"{where}: entry {i}: 'should_trigger' must be true or false")
        if query in seen:
            raise UserError(f"{where}: entry {i}: duplicate query (same as entry {seen[query]}): {query[:60]!r}")
        seen[query] = i
        clean: dict[str, Any] = {"query": query, "should_trigger": row["should_trigger"]}
        for key, value in row.items():
            if key in clean:
                continue
            if value is None or value == "":
                continue
            if not isinstance(value, str):
                raise UserError(f"{where}: entry {i}: '{key}' must be a string")
            if key == "split" and value not in SPLITS:
                raise UserError(f"{where}: entry {i}: 'split' must be one of {', '.join(SPLITS)}")
            clean[key] = value
        out.append(clean)
    ids = [r.get("id") for r in out if r.get("id")]
    if len(set(ids)) != len(ids):
        dup = next(x for x in ids if ids.count(x) > 1)
        raise UserError(f"{where}: duplicate id {dup!r}")
    assign_ids(out)
    return [_ordered(r) for r in out]


def assign_ids(rows: list[dict[str, Any]]) -> None:
    """Give each row without an ``id`` the first free ``qNNN``: never one a row already has,
    so an unedited set saves again (an id made from the row's index could repeat one)."""
    used = {r["id"] for r in rows if r.get("id")}
    n = 0
    for r in rows:
        if not r.get("id"):
            while f"q{n:03d}" in used:
                n += 1
            r["id"] = f"q{n:03d}"
            used.add(r["id"])


def _ordered(row: dict[str, Any]) -> dict[str, Any]:
    keys = ["query", "should_trigger", *[k for k in EXTRA_KEYS if k in row],
            *sorted(k for k in row if k not in EXTRA_KEYS and k not in ("query", "should_trigger"))]
    return {k: row[k] for k in keys}


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Atomic write (temporary file + rename): a crash never leaves half a set."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(rows, indent=2, ensure_ascii=False) + "\n")


def contained(path: Path, root: Path) -> Path:
    """`path` resolved, or a UserError when it leaves `root` (a symlinked evals/ folder in a
    hostile skill must not redirect our writes)."""
    real, base = path.resolve(), root.resolve()
    if real != base and base not in real.parents:
        raise UserError(f"{path}: resolves outside the skill folder {root} ({real}); refusing to write")
    return real


def default_backup_dir() -> Path:
    """Backups live outside every skill folder: ``$SKILLEVAL_BACKUPS``, else beside the
    store (``<store root>/_backups``; the store's views only read Parquet)."""
    env = os.environ.get("SKILLEVAL_BACKUPS")
    if env:
        return Path(env).expanduser().resolve()
    from skilleval.store.catalog import local_dir, resolve_root

    return local_dir(resolve_root(None)) / "_backups"


def backup(path: Path, skill_name: str, backup_dir: Path | None = None) -> Path | None:
    """Copy `path` (if it exists) to the backup folder; returns the copy's path."""
    if not path.is_file():
        return None
    root = (backup_dir or default_backup_dir()) / "evalsets" / _safe(skill_name)
    root.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    dest = root / f"{stamp}-{_safe(path.name)}"
    shutil.copy2(path, dest)
    return dest


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:100] or "_"
