"""The store: a root folder of Parquet tables, read through DuckDB views.

Layout: ``<root>/<table>/experiment=<name>/run=<run_id>/part-*.parquet``. Every row carries
its own identity columns (run, sweep, job, experiment), so views read the parts without hive
partitioning. Views are created for every table that has parts; ``runs`` keeps the latest
status row of each run.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import duckdb
import pyarrow as pa

from skilleval.store import schema as schemas
from skilleval.store.health import is_read_failure, quarantine_unreadable
from skilleval.store.liveness import alive_runs
from skilleval.store.writer import PartWriter

DEFAULT_ROOT = "~/.local/share/skilleval/store"

SCHEMAS: dict[str, pa.Schema] = {
    "trials": schemas.TRIALS,
    "queries": schemas.QUERIES,
    "runs": schemas.RUNS,
}

# Views that are more than `select *` over the parts. A run whose latest status is
# `running` but whose liveness lease nobody holds was killed: it shows as `stale`.
_VIEW_SQL = {
    "runs": "SELECT * REPLACE (CASE WHEN status = 'running' AND run_id NOT IN "
            "(SELECT run_id FROM __alive_runs) THEN 'stale' ELSE status END AS status) FROM "
            "(SELECT * FROM ({src}) QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY ts DESC) = 1)",
}
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


def resolve_root(root: str | os.PathLike[str] | None = None) -> Path:
    """`store.root` if given, else ``$SKILLEVAL_STORE``, else a stable per-user default."""
    value = root or os.environ.get("SKILLEVAL_STORE") or DEFAULT_ROOT
    return Path(os.path.expandvars(os.path.expanduser(str(value)))).resolve()


@dataclass
class Store:
    root: Path
    flush_rows: int = 5000
    flush_seconds: float = 1.0
    _writers: list[PartWriter] = field(default_factory=list)

    def writer(self, table: str, experiment: str, run_id: str) -> PartWriter:
        directory = self.root / table / f"experiment={experiment}" / f"run={run_id}"
        w = PartWriter(directory, SCHEMAS[table], flush_rows=self.flush_rows,
                       flush_seconds=self.flush_seconds)
        self._writers.append(w)
        return w

    def close(self) -> None:
        for w in self._writers:
            w.close()

    # -- reading --------------------------------------------------------------------------

    def tables(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir()
                      if p.is_dir() and not p.name.startswith(("_", "."))
                      and next(p.glob("**/*.parquet"), None) is not None)

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with one view per table (no lock on the store)."""
        quarantine_unreadable(self.root)  # one damaged part must not break every view
        con = duckdb.connect()
        con.register("__alive_runs", pa.table({"run_id": pa.array(alive_runs(self.root), pa.string())}))
        for table in self.tables():
            glob = (_glob_literal((self.root / table).as_posix()) + "/**/*.parquet").replace("'", "''")
            src = f"SELECT * FROM read_parquet('{glob}', union_by_name = true, hive_partitioning = false)"
            con.execute(f'CREATE VIEW "{table}_all" AS {src}')
            keyed = "key" in con.sql(f'SELECT * FROM "{table}_all" LIMIT 0').columns
            sql = _VIEW_SQL.get(table, _KEYED_SQL if keyed else "{src}").format(src=f'SELECT * FROM "{table}_all"')
            con.execute(f'CREATE VIEW "{table}" AS {sql}')
        return con

    def lookup(self, table: str, key_column: str, keys: Sequence[str],
               where: str = "TRUE") -> pa.Table:
        """Rows of `table` whose `key_column` is in `keys` (one row per key, newest first)."""
        try:
            return self._lookup(table, key_column, keys, where)
        except duckdb.Error as exc:
            if not (is_read_failure(exc) and quarantine_unreadable(self.root, deep=True)):
                raise
            return self._lookup(table, key_column, keys, where)

    def _lookup(self, table: str, key_column: str, keys: Sequence[str], where: str) -> pa.Table:
        if table not in self.tables() or not keys:
            return pa.table({key_column: pa.array([], pa.string())})
        con = self.connect()
        try:
            wanted = pa.table({"k": pa.array(list(keys), pa.string())})
            con.register("wanted", wanted)
            return con.sql(  # over every row (`_all`): the QUALIFY below picks one per key
                f'SELECT t.* FROM "{table}_all" t JOIN wanted w ON t.{key_column} = w.k '
                f"WHERE {where} QUALIFY row_number() OVER (PARTITION BY t.{key_column} "
                f"ORDER BY t.ts DESC) = 1"
            ).to_arrow_table()
        finally:
            con.close()

    def query(self, sql: str, params: Sequence[Any] | None = None) -> pa.Table:
        try:
            return self._query(sql, params)
        except duckdb.Error as exc:  # a page DuckDB could not decode: find the part, retry
            if not (is_read_failure(exc) and quarantine_unreadable(self.root, deep=True)):
                raise
            return self._query(sql, params)

    def _query(self, sql: str, params: Sequence[Any] | None) -> pa.Table:
        con = self.connect()
        try:
            return con.sql(sql, params=params or None).to_arrow_table()
        finally:
            con.close()
