"""Append-only Parquet part writer: nothing is lost on a crash but the last second of rows.

Rows are buffered and written as a complete Parquet file every `flush_rows` rows or
`flush_seconds` seconds, first to ``*.parquet.tmp`` and then renamed: readers (whose glob is
``*.parquet``) never see a half-written file, and a ``kill -9`` loses only the unflushed
buffer. No job ever writes into a shared DuckDB file (one writer per file; parallel sweep
jobs would collide), so parallel jobs can share one store root.
"""
from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq


class PartWriter:
    def __init__(self, directory: Path, schema: pa.Schema, *, flush_rows: int = 5000,
                 flush_seconds: float = 1.0) -> None:
        self.directory = directory
        self.schema = schema
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self._rows: list[dict[str, Any]] = []
        self._last_flush = time.monotonic()
        self._seq = 0
        self.rows_written = 0
        self.files: list[Path] = []

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        self._rows.extend(rows)
        self._maybe_flush()

    def append(self, row: dict[str, Any]) -> None:
        """One row (the hot path of the trial recorder)."""
        self._rows.append(row)
        if len(self._rows) & 63 == 0 or len(self._rows) == 1:  # look at the clock now and then
            self._maybe_flush()

    def _maybe_flush(self) -> None:
        if (len(self._rows) >= self.flush_rows
                or time.monotonic() - self._last_flush >= self.flush_seconds):
            self.flush()

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self._rows:
            return
        table = pa.Table.from_pylist(self._rows, schema=self.schema)
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.directory / f"part-{self._seq:05d}-{uuid.uuid4().hex[:8]}.parquet"
        tmp = final.with_name(final.name + ".tmp")
        pq.write_table(table, tmp, compression="zstd", write_page_checksum=True)  # store check verifies
        os.replace(tmp, final)
        self._seq += 1
        self.rows_written += len(self._rows)
        self.files.append(final)
        self._rows = []

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> "PartWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
