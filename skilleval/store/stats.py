"""``skilleval store stats``: parts, rows and bytes per view, and how many parts are small.

Read from the Parquet footers only (no data pages), so it is cheap on an object store too.
"Dead" parts are ones a compacted part already holds, left by a killed compaction until
the next `skilleval store compact` deletes them; readers already skip them.
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass

from skilleval.store.fs import StoreLocation
from skilleval.store.parts import is_compacted, table_parts
from skilleval.cliargs import ArgParser as _Parser

SMALL_ROWS = 100_000


@dataclass
class ViewStats:
    view: str
    parts: int
    compacted_parts: int
    small_parts: int  # fewer than SMALL_ROWS rows: what compaction would merge
    rows: int
    bytes: int
    dead_parts: int


def store_stats(loc: StoreLocation) -> list[ViewStats]:
    out = []
    for table in loc.subdirs():
        parts = table_parts(loc, loc.join(table))
        if not parts.live and not parts.dead:
            continue
        rows = [loc.metadata(p).num_rows for p in parts.live]
        out.append(ViewStats(
            view=table, parts=len(parts.live),
            compacted_parts=sum(1 for p in parts.live if is_compacted(p)),
            small_parts=sum(1 for r in rows if r < SMALL_ROWS), rows=sum(rows),
            bytes=sum(loc.size(p) for p in parts.live), dead_parts=len(parts.dead)))
    return out


def stats_main(argv: list[str]) -> int:
    from skilleval.store.catalog import Store, named_root

    p = _Parser(prog="skilleval store stats", description="Parts, rows and bytes per view of the store.")
    p.add_argument("--store", help="store root or URL (default: $SKILLEVAL_STORE or the per-user store)")
    p.add_argument("--format", choices=["table", "json"], default="table")
    args = p.parse_args(argv)
    store = Store(named_root(args.store))
    stats = store_stats(store.location)
    if args.format == "json":
        print(json.dumps([asdict(s) for s in stats], indent=2))
        return 0
    from skilleval.terminal import PlainConsole
    from rich.table import Column, Table

    # View names and counts fold rather than end in "…" on a narrow terminal (a lost digit lies).
    table = Table(Column("view", no_wrap=True), *(Column(h, overflow="fold") for h in (
        "parts", "compacted", f"small (<{SMALL_ROWS:,} rows)", "rows written", "bytes",
        "dead (awaiting delete)")),
        # `sql`'s keyed views show each key once: a rerun's rows are written, not counted twice
        caption="rows written: every row in the parts; `skilleval sql` shows each key's newest "
                "(<view>_all: every row written)")
    for s in stats:
        table.add_row(s.view, f"{s.parts:,}", f"{s.compacted_parts:,}", f"{s.small_parts:,}",
                      f"{s.rows:,}", f"{s.bytes:,}", f"{s.dead_parts:,}")
    PlainConsole().print(table)
    if not stats:
        print(f"the store at {store.url} holds no parts yet", file=sys.stderr)
    return 0
