"""Unreadable Parquet parts: find them, move them aside, keep the rest of the store working.

One damaged part (a truncated copy, a zeroed block, a flipped bit, garbage from a bad disk)
used to break every view: DuckDB reads all parts of a table when a view is created or
queried, so even ``select 1`` failed. Before views are built, each part's footer is checked
(cheap; results cached per path, size and mtime), and a part that fails is *quarantined*:
moved under ``<root>/_quarantine/`` with a ``.corrupt`` suffix (no table glob matches it),
with one warning line naming it. A damage DuckDB only meets while reading data pages is
found by a deep check (every page read, checksums verified) after such a read fails.
Rows in a quarantined part are simply absent: a run re-pays only for the trials it held.
"""
from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

QUARANTINE = "_quarantine"
_MAGIC = b"PAR1"
_ok_footers: dict[str, tuple[int, int]] = {}  # path -> (size, mtime_ns) of a checked footer
_lock = threading.Lock()


@dataclass(frozen=True)
class PartProblem:
    path: Path
    reason: str


def _parts(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    out: list[Path] = []
    for table in root.iterdir():
        if table.is_dir() and not table.name.startswith(("_", ".")):
            out.extend(table.rglob("*.parquet"))
    return sorted(out)


def part_problem(path: Path, deep: bool = False) -> str | None:
    """Why `path` cannot be read as Parquet, or None. `deep` reads every page."""
    try:
        st = path.stat()
        if not deep:
            with _lock:
                if _ok_footers.get(str(path)) == (st.st_size, st.st_mtime_ns):
                    return None
        if st.st_size < 12:
            return f"{st.st_size} bytes: too short for Parquet"
        with path.open("rb") as fh:
            head = fh.read(4)
            fh.seek(-4, os.SEEK_END)
            tail = fh.read(4)
        if head != _MAGIC or tail != _MAGIC:
            return "no Parquet magic bytes (truncated, zeroed or not Parquet)"
        meta = pq.read_metadata(path)
        if deep:
            pq.read_table(path, page_checksum_verification=True)
        elif meta.num_columns == 0:
            return "no columns"
    except FileNotFoundError:
        return None  # gone meanwhile (another process quarantined or compacted it)
    except Exception as exc:  # noqa: BLE001 - any read failure is the finding itself
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    with _lock:
        _ok_footers[str(path)] = (st.st_size, st.st_mtime_ns)
    return None


def find_problems(root: Path, deep: bool = False) -> list[PartProblem]:
    found = []
    for p in _parts(root):
        reason = part_problem(p, deep=deep)
        if reason:
            found.append(PartProblem(p, reason))
    return found


def quarantine(root: Path, problem: PartProblem, *, announce: bool = True) -> Path | None:
    """Move the part under ``<root>/_quarantine/`` (same relative path, ``.corrupt`` added)."""
    rel = problem.path.relative_to(root)
    dest = root / QUARANTINE / rel.with_name(rel.name + ".corrupt")
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(problem.path, dest)
    except FileNotFoundError:
        return None  # another reader moved it first
    if announce:
        from skilleval.terminal import visible_line

        print(visible_line(f"skilleval: warning: unreadable store part {problem.path} "
                           f"({problem.reason}); moved to {dest}, its rows are left out"),
              file=sys.stderr)
    return dest


def quarantine_unreadable(root: Path, deep: bool = False) -> int:
    """Quarantine every part that fails the (footer or deep) check; how many were moved."""
    moved = 0
    for problem in find_problems(root, deep=deep):
        if quarantine(root, problem) is not None:
            moved += 1
    return moved


def is_read_failure(exc: BaseException) -> bool:
    """A DuckDB error that can come from a damaged file (not from the SQL itself)."""
    import duckdb

    sql_errors = (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException,
                  duckdb.ConversionException, duckdb.ConstraintException)
    return isinstance(exc, duckdb.Error) and not isinstance(exc, sql_errors)
