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
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pyarrow as pa

from skilleval.errors import UserError
from skilleval.store import schema as schemas
from skilleval.store.interruptible import interruptible
from skilleval.store.fs import StoreLocation, open_location
from skilleval.store.health import is_read_failure, quarantine_unreadable
from skilleval.store.liveness import alive_runs
from skilleval.store.parts import table_parts
from skilleval.store.writer import PartWriter

if TYPE_CHECKING:  # imported where a store is read: a run on a fresh store never reads one
    import duckdb

DEFAULT_ROOT = "~/.local/share/skilleval/store"

SCHEMAS: dict[str, pa.Schema] = {
    "trials": schemas.TRIALS,
    "queries": schemas.QUERIES,
    "runs": schemas.RUNS,
    # self-check control trials: shaped like trials, kept apart so no metric counts them
    "controls": schemas.TRIALS,
}

# Views that are more than `select *` over the parts. `runs` keeps each run's latest row; on a
# local store, a run whose latest status is `running` but whose liveness lease nobody holds
# was killed: it shows as `stale` (leases are per machine, so a remote store has no such rule).
_LATEST_RUN = "SELECT * FROM ({src}) QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY ts DESC) = 1"
_STALE_RUNS = ("SELECT * REPLACE (CASE WHEN status = 'running' AND run_id NOT IN "
               "(SELECT run_id FROM __alive_runs) THEN 'stale' ELSE status END AS status) FROM "
               f"({_LATEST_RUN})")
# A table with a `key` column shows each key once (its newest row: a retried error, or a
# trial two runs raced for, is written twice); ``<table>_all`` keeps every row.
_KEYED_SQL = "SELECT * FROM ({src}) QUALIFY row_number() OVER (PARTITION BY key ORDER BY ts DESC) = 1"


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


def named_root(arg: str | None) -> Path | str:
    """`resolve_root` for a reading command's ``--store``: a local folder the user named must
    exist (exit 2, "store not found"), where reading it would report an empty store and a
    compaction would create it. The default store may not exist yet: that is "no runs yet"."""
    root = resolve_root(arg)
    if arg and isinstance(root, Path) and not root.is_dir():
        raise UserError(f"--store {arg}: store not found" + (" (a file, not a folder)" if root.exists() else ""))
    return root


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
    #: the most Parquet parts one connection's views read (see `compact_hint`)
    parts_read: int = field(default=0, init=False)

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
        return [t for t in self._table_dirs() if self.location.find(self.location.join(t))]

    def _table_dirs(self) -> list[str]:
        """Folders under the root that hold tables (``_quarantine``, ``_live``, ``_leases``
        and other ``_``/``.`` folders hold store state, not results)."""
        return [t for t in self.location.subdirs() if not t.startswith(("_", "."))]

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with one view per table (no lock on the store).

        Each view reads the table's live parts (`parts.table_parts`): parts a compacted part
        replaced are left out even before compaction has deleted them. On a local store, an
        unreadable part is quarantined first (`health`): one damaged part must not break
        every view."""
        import duckdb

        local = self.location.is_local
        if local:
            quarantine_unreadable(Path(self.location.path))
        con = duckdb.connect()
        self.location.register(con)
        if local:
            alive = alive_runs(Path(self.location.path))
            con.register("__alive_runs", pa.table({"run_id": pa.array(alive, pa.string())}))
        parts = 0
        for table in self._table_dirs():
            live = table_parts(self.location, self.location.join(table)).live
            parts += len(live)
            if not live:
                continue
            files = [_glob_literal(self.location.uri(f)) for f in live]
            rel = con.read_parquet(files, union_by_name=True, hive_partitioning=False)
            rel.create_view(f"{table}_all")
            if table == "runs":
                sql = _STALE_RUNS if local else _LATEST_RUN
            else:
                sql = _KEYED_SQL if "key" in rel.columns else "{src}"
            src = f'SELECT * FROM "{table}_all"'
            con.execute(f'CREATE VIEW "{table}" AS {sql.format(src=src)}')
        self.parts_read = max(self.parts_read, parts)
        return con

    def compact_hint(self, at_parts: int) -> str | None:
        """One line for a job that read a store of at least `at_parts` parts (0: never).

        Every run reads the store before its first call (its cache of paid trials, the eval
        set's stored findings), and DuckDB's cost grows with the number of files, not rows:
        ``benchmarks/store_parts_start.py`` measured a stub run at 7.2 s on a store of 2,000
        small parts and 1.3 s on its compacted copy (5.4x, paired 95 % CI 4.8-6.2; 2 CPUs).
        Months of use leave one small part per job flush, and nothing else tells the user why
        runs got slow."""
        if at_parts <= 0 or self.parts_read < at_parts:
            return None
        return (f"note: the store {self.url} holds {self.parts_read} Parquet parts, and every run "
                f"reads them before its first call; `skilleval store compact` merges them "
                f"(runs start faster)")

    def lookup(self, table: str, key_column: str, keys: Sequence[str],
               where: str = "TRUE") -> pa.Table:
        """Rows of `table` whose `key_column` is in `keys` (one row per key, newest first)."""
        empty = pa.table({key_column: pa.array([], pa.string())})
        if not keys or table not in self._table_dirs():  # nothing written yet: no connection
            return empty

        def run(con: duckdb.DuckDBPyConnection) -> pa.Table:
            if not _has_view(con, f"{table}_all"):
                return empty
            wanted = pa.table({"k": pa.array(list(keys), pa.string())})
            con.register("wanted", wanted)
            return con.sql(  # over every row (`_all`): the QUALIFY below picks one per key
                f'SELECT t.* FROM "{table}_all" t JOIN wanted w ON t.{key_column} = w.k '
                f"WHERE {where} QUALIFY row_number() OVER (PARTITION BY t.{key_column} "
                f"ORDER BY t.ts DESC) = 1"
            ).to_arrow_table()

        return self._read(run)

    def query(self, sql: str, params: Sequence[Any] | None = None) -> pa.Table:
        """The rows of `sql`; a table with no columns for SQL that makes no relation (empty,
        only a comment, a SET)."""
        def run(con: duckdb.DuckDBPyConnection) -> pa.Table:
            def work() -> pa.Table:
                rel = con.sql(sql, params=params or None)
                return pa.table({}) if rel is None else rel.to_arrow_table()
            return interruptible(con, work)  # Ctrl-C stops a long query (see the module)
        return self._read(run)

    def _read(self, fn: Callable[[duckdb.DuckDBPyConnection], pa.Table]) -> pa.Table:
        """Run `fn` on a fresh connection. List the parts again if a compaction deleted one
        between listing and reading (its rows are then in the compacted part); if a data page
        could not be decoded, find the damaged part by a deep check, quarantine it, retry."""
        import duckdb

        deep_checked = False
        for attempt in range(5):
            con = None
            try:
                con = self.connect()  # binds the views: a part deleted since listing fails here
                return fn(con)
            except duckdb.IOException as exc:
                if attempt == 4 or not _vanished(exc):
                    if not self._quarantine_after(exc, deep_checked):
                        raise
                    deep_checked = True
            except duckdb.Error as exc:
                if not self._quarantine_after(exc, deep_checked):
                    raise
                deep_checked = True
            finally:
                if con is not None:
                    con.close()
        raise AssertionError("unreachable")

    def _quarantine_after(self, exc: Exception, done: bool) -> bool:
        """True when `exc` was a damaged part that a deep check has now moved aside. On an
        object store nothing is moved: a damaged part is one line naming it (exit 3), where it
        was a traceback (or, in `sql`, an "SQL error")."""
        if not self.location.is_local and is_read_failure(exc) and not isinstance(exc, duckdb_http_error()):
            raise self.location.damaged("", exc) from None
        return (not done and self.location.is_local and is_read_failure(exc)
                and bool(quarantine_unreadable(Path(self.location.path), deep=True)))

def duckdb_http_error() -> tuple[type[BaseException], ...]:
    """DuckDB errors of the connection to an object store (not of a part's bytes)."""
    import duckdb

    return tuple(t for t in (getattr(duckdb, "HTTPException", None),) if t is not None)


def _has_view(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?",
                            [name]).fetchall()[0][0])


def _vanished(exc: Exception) -> bool:
    text = str(exc).lower()
    return "no such file" in text or "not found" in text or "no files found" in text
