"""The store: a root folder of Parquet tables, read through DuckDB views.

The root is a local folder or an fsspec URL (``s3://bucket/prefix``; see `skilleval.store.fs`).
Layout: ``<root>/<table>/experiment=<name>/run=<run_id>/part-*.parquet`` (plus compacted
``<root>/<table>/experiment=<name>/compact-*.parquet``, see `parts`). Every row carries
its own identity columns (run, sweep, job, experiment), so views read the parts without hive
partitioning. Views are created for every table that has parts; ``runs`` keeps the latest
status row of each run.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import duckdb
import pyarrow as pa

from skilleval.store import schema as schemas
from skilleval.store.fs import StoreLocation, open_location
from skilleval.store.parts import table_parts
from skilleval.store.writer import PartWriter

DEFAULT_ROOT = "~/.local/share/skilleval/store"

SCHEMAS: dict[str, pa.Schema] = {
    "trials": schemas.TRIALS,
    "queries": schemas.QUERIES,
    "runs": schemas.RUNS,
    # self-check control trials: shaped like trials, kept apart so no metric counts them
    "controls": schemas.TRIALS,
}

# Views that are more than `select *` over the parts.
_VIEW_SQL = {
    "runs": "SELECT * FROM ({src}) QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY ts DESC) = 1",
}


def register_schema(table: str, schema: pa.Schema) -> None:
    """Let a module (optimiser, functional evals, a plugin) declare a table of its own."""
    SCHEMAS[table] = schema


def _glob_literal(path: str) -> str:
    """`path` with DuckDB's glob characters matched literally: a store under ``a[1]`` must
    not fail, and one under ``p?q`` must not also read the parts of ``pxq``."""
    return "".join(f"[{ch}]" if ch in "[*?" else ch for ch in path)


def resolve_root(root: str | os.PathLike[str] | None = None) -> Path | str:
    """`store.root` if given, else ``$SKILLEVAL_STORE``, else a stable per-user default.

    A URL (``s3://bucket/prefix``) is returned as it is; `Store` checks its scheme."""
    value = str(root or os.environ.get("SKILLEVAL_STORE") or DEFAULT_ROOT)
    loc = open_location(value) if "://" not in value or value.startswith("file://") else None
    return Path(loc.path) if loc is not None else value


def local_dir(root: Path | str) -> Path:
    """A local folder for `root` (from `resolve_root`): the store itself when it is local, the
    per-machine state folder of a remote store otherwise (backups, blobs, batch ids)."""
    return root if isinstance(root, Path) else _state_dir(root)


def _state_dir(url: str) -> Path:
    """Local folder for machine-local state of a remote store (batch ids, output blobs)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser()
    return base / "skilleval" / "remote-stores" / hashlib.sha256(url.encode()).hexdigest()[:16]


@dataclass
class Store:
    """The result store. `root` is a local folder: the store itself, or for a remote store
    (`location.is_local` false) a per-machine folder for state that is not results."""

    root: Path | str
    flush_rows: int = 5000
    flush_seconds: float = 1.0
    _writers: list[PartWriter] = field(default_factory=list)
    location: StoreLocation = field(init=False)

    def __post_init__(self) -> None:
        self.location = open_location(str(self.root))
        self.root = Path(self.location.path) if self.location.is_local else _state_dir(self.location.url)

    @property
    def url(self) -> str:
        """Where the results are: the local folder or the object-store URL."""
        return self.location.url

    def writer(self, table: str, experiment: str, run_id: str) -> PartWriter:
        directory = self.location.join(table, f"experiment={experiment}", f"run={run_id}")
        w = PartWriter(directory, SCHEMAS[table], flush_rows=self.flush_rows,
                       flush_seconds=self.flush_seconds, location=self.location)
        self._writers.append(w)
        return w

    def close(self) -> None:
        for w in self._writers:
            w.close()

    # -- reading --------------------------------------------------------------------------

    def tables(self) -> list[str]:
        return [t for t in self.location.subdirs() if self.location.find(self.location.join(t))]

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with one view per table (no lock on the store).

        Each view reads the table's live parts (`parts.table_parts`): parts a compacted part
        replaced are left out even before compaction has deleted them."""
        con = duckdb.connect()
        self.location.register(con)
        for table in self.location.subdirs():
            live = table_parts(self.location, self.location.join(table)).live
            if not live:
                continue
            files = [_glob_literal(self.location.uri(f)) for f in live]
            rel = con.read_parquet(files, union_by_name=True, hive_partitioning=False)
            rel.create_view(f"__parts_{table}")
            sql = _VIEW_SQL.get(table, "{src}").format(src=f'SELECT * FROM "__parts_{table}"')
            con.execute(f'CREATE VIEW "{table}" AS {sql}')
        return con

    def lookup(self, table: str, key_column: str, keys: Sequence[str],
               where: str = "TRUE") -> pa.Table:
        """Rows of `table` whose `key_column` is in `keys` (one row per key, newest first)."""
        empty = pa.table({key_column: pa.array([], pa.string())})
        if not keys:
            return empty

        def run(con: duckdb.DuckDBPyConnection) -> pa.Table:
            if not _has_view(con, table):
                return empty
            wanted = pa.table({"k": pa.array(list(keys), pa.string())})
            con.register("wanted", wanted)
            return con.sql(
                f'SELECT t.* FROM "{table}" t JOIN wanted w ON t.{key_column} = w.k '
                f"WHERE {where} QUALIFY row_number() OVER (PARTITION BY t.{key_column} "
                f"ORDER BY t.ts DESC) = 1"
            ).to_arrow_table()

        return self._read(run)

    def query(self, sql: str, params: Sequence[Any] | None = None) -> pa.Table:
        return self._read(lambda con: con.sql(sql, params=params or None).to_arrow_table())

    def _read(self, fn: Callable[[duckdb.DuckDBPyConnection], pa.Table]) -> pa.Table:
        """Run `fn` on a fresh connection; list the parts again if a compaction deleted one
        between listing and reading (its rows are then in the compacted part)."""
        for attempt in range(5):
            con = None
            try:
                con = self.connect()  # binds the views: a part deleted since listing fails here
                return fn(con)
            except duckdb.IOException as exc:
                if attempt == 4 or not _vanished(exc):
                    raise
            finally:
                if con is not None:
                    con.close()
        raise AssertionError("unreachable")


def _has_view(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?",
                            [name]).fetchall()[0][0])


def _vanished(exc: Exception) -> bool:
    text = str(exc).lower()
    return "no such file" in text or "not found" in text or "no files found" in text
