"""A trigger eval set as editable rows: read leniently, validate strictly, write atomically.

`skilleval.datasets.load_trigger_cases` is what experiments use, and it refuses a duplicate
query outright. Drafting, checking and reviewing need to *see* a flawed set (to name its
duplicates), so this module reads the raw rows, keeping every extra key (``id``,
``rationale``, ``span``, ``source``, ``split``, and any other). Writing goes through
`validate_rows`: the result is skill-creator's format (a JSON array of ``{query,
should_trigger}``), with the extra keys skill-creator ignores, kept as they were.

Why one rule set (`entry_problem`) for reading and saving, copied from the runner's: a set
that skilleval runs must save unchanged from review-evals (an integer ``id``, a ``tags``
list or a long query were refused at Save), and a saved set must run.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable

from skilleval.atomic import write_text_atomic
from skilleval.datasets import DEFAULT_NAMES
from skilleval.datasets import entry_problem as dataset_entry_problem
from skilleval.errors import UserError
from skilleval.textfiles import parse_json, read_text_file

#: Keys written after query/should_trigger, in this order; other keys are kept after them.
EXTRA_KEYS = ("id", "rationale", "span", "source", "split")


def _no_id(value: Any) -> bool:
    """An ``id`` that is absent, null or empty: the row is given one (`assign_ids`). Not a
    falsy test: ``0`` is an id the runner accepts."""
    return value is None or value == ""


def entry_problem(entry: Any) -> str | None:
    """The runner's rule for one entry (`datasets.entry_problem`), a blank id allowed: the
    row is given one (`assign_ids`)."""
    return dataset_entry_problem(entry, blank_id_ok=True)


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
    """Every entry as a dict; only each entry is checked (`entry_problem`), so duplicates and
    imbalance reach the checks."""
    text = read_text_file(path)
    entries: list[tuple[str, Any]] = []
    if path.suffix == ".jsonl":
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                entries.append((f"line {lineno}", parse_json(line, f"{path}: line {lineno}")))
    else:
        data = parse_json(text, str(path))
        if isinstance(data, dict) and isinstance(data.get("queries"), list):
            data = data["queries"]
        if not isinstance(data, list):
            raise UserError(f"{path}: expected a JSON array of {{query, should_trigger}} objects, "
                            f"got {type(data).__name__}")
        entries = [(f"entry {i}", e) for i, e in enumerate(data)]
    rows = []
    for label, e in entries:
        problem = entry_problem(e)
        if problem:
            raise UserError(f"{path}: {label}: {problem}")
        rows.append(dict(e))
    return rows


def validate_rows(rows: Any, where: str = "eval set", *, skip_blank: bool = False,
                  reserved: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Clean rows ready to write, or a UserError naming the first bad row.

    Rules: each entry passes `entry_problem` (the runner's rules); ``query`` is trimmed and
    non-empty; no two queries the same after trimming (skill-creator would merge them
    silently, the runner refuses them); no two ids the same as text (the runner reads ids as
    text); rows without an id are given one. Every other key is kept as it was.

    Rows are named ``row #N`` counting from 1, as the review page numbers them. `skip_blank`:
    rows whose query is blank are left out (the page's unfilled rows) without renumbering
    the others, so a message names the row the user sees.
    """
    if not isinstance(rows, list):
        raise UserError(f"{where}: expected a list of entries")
    out: list[dict[str, Any]] = []
    numbers: list[int] = []
    seen: dict[str, int] = {}
    for n, row in enumerate(rows, 1):
        problem = entry_problem(row)
        if problem:
            raise UserError(f"{where}: row #{n}: {problem}")
        query = row["query"].strip()
        if not query:
            if skip_blank:
                continue
            raise UserError(f"{where}: row #{n}: 'query' is empty")
        if query in seen:
            raise UserError(f"{where}: row #{n}: duplicate query (same as row #{seen[query]}): {query[:60]!r}")
        seen[query] = n
        clean = {**row, "query": query}
        if "id" in clean and _no_id(clean["id"]):
            del clean["id"]
        out.append(clean)
        numbers.append(n)
    first_with: dict[str, int] = {}
    for n, r in zip(numbers, out):
        if "id" in r:
            key = str(r["id"])
            if key in first_with:
                raise UserError(f"{where}: row #{n}: duplicate id {key!r} (same as row #{first_with[key]})")
            first_with[key] = n
    assign_ids(out, reserved)
    return [_ordered(r) for r in out]


def assign_ids(rows: list[dict[str, Any]], reserved: Iterable[str] = ()) -> None:
    """Give each row without an ``id`` the first free ``qNNN``: never one a row already has,
    so an unedited set saves again (an id made from the row's index could repeat one), nor
    one in `reserved` (ids of rows deleted since: see `review.ReviewState.issued`)."""
    used = {str(r["id"]) for r in rows if not _no_id(r.get("id"))} | set(reserved)
    n = 0
    for r in rows:
        if _no_id(r.get("id")):
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
