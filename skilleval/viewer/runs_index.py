"""The ``runs`` table kept in memory, read incrementally, queried with DuckDB.

Why: every run writes its status rows as tiny Parquet parts (one per status change). Asking
DuckDB to open a few hundred tiny files costs about a millisecond each, on *every* request of
a page that polls. The index reads each part once (new parts only, found by listing the
folders), and the Runs page's filtering, ordering and paging still run as SQL in DuckDB, over
the in-memory Arrow table.
"""
from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from skilleval.store.fs import local_location
from skilleval.store.parts import table_parts
from skilleval.store.schema import RUNS


class RunsIndex:
    def __init__(self, root: Path) -> None:
        self.dir = root / "runs"
        self._parts: dict[str, pa.Table] = {}
        self._table: pa.Table | None = None
        self._lock = threading.Lock()

    def _files(self) -> list[str]:
        """The live parts: each run's own parts and the merged ``compact-*`` parts that
        ``store compact`` writes one level up (reading only ``<exp>/<run>/`` lost every
        compacted run), less the parts a merged one replaced."""
        return table_parts(local_location(), str(self.dir)).live

    def table(self) -> pa.Table:
        """Every runs row (all status changes), typed as the RUNS schema."""
        with self._lock:
            files = self._files()
            live = set(files)
            new = [f for f in files if f not in self._parts]
            gone = [f for f in self._parts if f not in live]  # replaced by a merge
            for f in gone:
                del self._parts[f]
            for f in new:
                try:
                    t = pq.read_table(f)
                except (OSError, pa.ArrowInvalid):
                    continue  # unreadable part: skipped here, as DuckDB would fail on it
                cols = [t.column(n).cast(RUNS.field(n).type) if n in t.column_names
                        else pa.nulls(t.num_rows, RUNS.field(n).type) for n in RUNS.names]
                self._parts[f] = pa.Table.from_arrays(cols, schema=RUNS)
            if new or gone or self._table is None:
                self._table = pa.concat_tables(list(self._parts.values())) if self._parts \
                    else RUNS.empty_table()
            return self._table

    def connect(self) -> duckdb.DuckDBPyConnection:
        """A connection with ``runs`` (latest row per run) and ``run_rows`` (every row)."""
        con = duckdb.connect()
        con.register("run_rows", self.table())
        con.execute("CREATE VIEW runs AS SELECT r.*, s.started FROM run_rows r JOIN "
                    "(SELECT run_id, min(ts) AS started FROM run_rows GROUP BY run_id) s USING (run_id) "
                    "QUALIFY row_number() OVER (PARTITION BY r.run_id ORDER BY r.ts DESC) = 1")
        return con
