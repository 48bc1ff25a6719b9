"""``skilleval store compact``: merge a table's small Parquet parts into large ones.

Every job writes its own parts (one per flush), so months of use leave one small part per
job-second and every query opens thousands of files. Compaction merges, per table and
experiment, runs of small parts into ``compact-*.parquet`` files of up to ``--target-rows``
rows, and is safe to kill at any instant:

1. the merged part is written whole (temp file + rename locally, one PUT on an object
   store) and lists in its footer the parts it holds (`skilleval.store.parts`);
2. from that moment readers skip the listed parts, deleted or not;
3. then the listed parts are deleted (and a later compaction deletes any a kill left).

So a reader sees either the old parts or the merged one, never both and never neither, and
a kill loses and duplicates nothing. Rows are copied as they are (no de-duplication: a row
written twice by two jobs stays twice, as it was). One compaction runs at a time per store.
"""
from __future__ import annotations

import json
import os
import posixpath
import socket
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterator

import pyarrow as pa

from skilleval.errors import UserError
from skilleval.store.fs import StoreLocation
from skilleval.store.parts import COMPACT_PREFIX, REPLACES_KEY, relative, replaces, table_parts
from skilleval.cliargs import ArgParser as _Parser

LOCK_NAME = ".compact.lock"


@dataclass
class TableReport:
    table: str
    parts_before: int = 0
    parts_after: int = 0
    merged: int = 0  # small parts folded into compacted ones
    written: int = 0  # compacted parts written
    rows_moved: int = 0
    leftovers_removed: int = 0  # dead parts a killed compaction had left


@dataclass
class CompactReport:
    tables: list[TableReport] = field(default_factory=list)


def compact(loc: StoreLocation, *, target_rows: int = 1_000_000, break_lock: bool = False,
            tables: list[str] | None = None) -> CompactReport:
    report = CompactReport()
    with _lock(loc, break_lock):
        for table in tables or loc.subdirs():
            rep = compact_table(loc, table, target_rows=target_rows)
            if rep.parts_before:
                report.tables.append(rep)
    return report


def compact_table(loc: StoreLocation, table: str, *, target_rows: int) -> TableReport:
    table_dir = loc.join(table)
    rep = TableReport(table)
    parts = table_parts(loc, table_dir)
    loc.remove(parts.dead)  # left by a compaction killed between its steps 1 and 3
    rep.leftovers_removed = len(parts.dead)
    rep.parts_before = len(parts.live)
    for directory, batch in plan(loc, table_dir, parts.live, target_rows):
        merge(loc, table_dir, directory, batch)
        rep.rows_moved += sum(rows for _, rows in batch)
        rep.merged += len(batch)
        rep.written += 1
    rep.parts_after = rep.parts_before - rep.merged + rep.written
    return rep


def plan(loc: StoreLocation, table_dir: str, live: list[str], target_rows: int
         ) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """Batches of (part, rows) to merge: small parts of one experiment folder, in path order,
    at most `target_rows` rows per batch, at least two parts each."""
    groups: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for path in live:
        rows = loc.metadata(path).num_rows
        if rows >= target_rows:
            continue  # already large
        top = relative(table_dir, path).split("/", 1)[0]
        directory = posixpath.join(table_dir, top) if "/" in relative(table_dir, path) else table_dir
        groups[directory].append((path, rows))
    for directory, items in sorted(groups.items()):
        batch: list[tuple[str, int]] = []
        total = 0
        for path, rows in items:
            if batch and total + rows > target_rows:
                if len(batch) > 1:
                    yield directory, batch
                batch, total = [], 0
            batch.append((path, rows))
            total += rows
        if len(batch) > 1:
            yield directory, batch


def merge(loc: StoreLocation, table_dir: str, directory: str,
          batch: list[tuple[str, int]]) -> str:
    """Steps 1-3 for one batch; returns the compacted part's path."""
    tables = [loc.read_table(path) for path, _ in batch]
    merged = pa.concat_tables(tables, promote_options="permissive")
    assert merged.num_rows == sum(rows for _, rows in batch), "row count changed while merging"
    listed = sorted({relative(table_dir, p) for p, _ in batch}
                    | {r for p, _ in batch for r in replaces(loc, p)})
    meta = dict(merged.schema.metadata or {})
    meta[REPLACES_KEY] = json.dumps(listed).encode()
    final = loc.write_part(directory, loc.unique_name(COMPACT_PREFIX.rstrip("-")),
                           merged.replace_schema_metadata(meta))
    loc.remove([p for p, _ in batch])
    if loc.is_local:  # run folders emptied by the merge (a writer recreates its own)
        for folder in sorted({os.path.dirname(p) for p, _ in batch}, reverse=True):
            try:
                os.removedirs(folder)
            except OSError:
                pass
    return final


class _lock:
    """One compaction per store: a lock file holding host and pid. A lock left by a killed
    compaction on this host is taken over; elsewhere, `--break-lock` says it is stale."""

    def __init__(self, loc: StoreLocation, force: bool) -> None:
        self.loc, self.force = loc, force
        self.path = loc.join(LOCK_NAME)
        self.me = f"{socket.gethostname()} {os.getpid()}"

    def __enter__(self) -> None:
        held = self._read()
        if held is not None and not self.force and not self._stale(held):
            raise UserError(f"store compact: another compaction holds {self.path} ({held}); "
                            "pass --break-lock if it is no longer running")
        if self.loc.is_local:
            os.makedirs(self.loc.path, exist_ok=True)
            if held is not None:
                os.remove(self.path)
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                raise UserError(f"store compact: another compaction just took {self.path}") from None
            except OSError as exc:  # a read-only store: nothing can be merged there
                raise UserError(f"store compact: cannot write {self.path} "
                                f"({exc.strerror or exc}): the store is not writable") from None
            with os.fdopen(fd, "w") as fh:
                fh.write(self.me)
        else:
            self.loc.fs.pipe_file(self.path, self.me.encode())

    def __exit__(self, *exc: object) -> None:
        self.loc.remove([self.path])

    def _read(self) -> str | None:
        try:
            if self.loc.is_local:
                with open(self.path) as fh:
                    return fh.read().strip()
            return self.loc.fs.cat_file(self.path).decode().strip()
        except FileNotFoundError:
            return None

    @staticmethod
    def _stale(held: str) -> bool:
        host, _, pid = held.partition(" ")
        if host != socket.gethostname() or not pid.isdigit():
            return False
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False


def compact_main(argv: list[str]) -> int:
    from skilleval.store.catalog import Store, named_root

    p = _Parser(prog="skilleval store compact", description=__doc__.split("\n\n")[0].replace("``", ""))
    p.add_argument("--store", help="store root or URL (default: $SKILLEVAL_STORE or the per-user store)")
    p.add_argument("--target-rows", type=int, default=1_000_000,
                   help="rows per compacted part at most (default 1,000,000)")
    p.add_argument("--break-lock", action="store_true",
                   help="take the lock of a compaction that is no longer running")
    p.add_argument("--format", choices=["table", "json"], default="table")
    args = p.parse_args(argv)
    if args.target_rows < 2:
        raise UserError(f"skilleval store compact: --target-rows must be at least 2, got {args.target_rows}")
    store = Store(named_root(args.store))
    report = compact(store.location, target_rows=args.target_rows, break_lock=args.break_lock)
    if args.format == "json":
        print(json.dumps([vars(t) for t in report.tables], indent=2))
        return 0
    from skilleval.terminal import PlainConsole
    from rich.table import Column, Table

    # Table names and counts fold rather than end in "…" on a narrow terminal (a lost digit lies).
    out = Table(Column("table", no_wrap=True), *(Column(h, overflow="fold") for h in (
        "parts before", "parts after", "merged", "written", "rows moved", "leftovers removed")))
    for t in report.tables:
        out.add_row(t.table, str(t.parts_before), str(t.parts_after), str(t.merged),
                    str(t.written), str(t.rows_moved), str(t.leftovers_removed))
    PlainConsole().print(out)
    if not report.tables:
        print(f"nothing to compact in {store.url}", file=sys.stderr)
    return 0
