"""Append-only Parquet part writer: nothing is lost on a crash but the last second of rows.

Rows are buffered and written as a complete Parquet file every `flush_rows` rows or
`flush_seconds` seconds, first to ``*.parquet.tmp`` and then renamed: readers (whose glob is
``*.parquet``) never see a half-written file, and a ``kill -9`` loses only the unflushed
buffer.

Why a timer thread: a row that arrives alone (a slow `claude_cli` trial, then minutes of
nothing) must still reach disk within `flush_seconds`, so the deadline cannot wait for the
next `append`. The first row into an empty buffer arms a `threading.Timer`; appends on the
hot path only take an uncontended lock. No job ever writes into a shared DuckDB file (one writer per file; parallel sweep
jobs would collide), so parallel jobs can share one store root.
"""
from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa

from skilleval.store.fs import StoreLocation, local_location


class PartWriter:
    def __init__(self, directory: Path | str, schema: pa.Schema, *, flush_rows: int = 5000,
                 flush_seconds: float = 1.0, location: StoreLocation | None = None) -> None:
        self.directory = str(directory)
        self.location = location or local_location()  # where parts go (a folder, S3, ...)
        self.schema = schema
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self._rows: list[dict[str, Any]] = []
        self._last_flush = time.monotonic()
        self._lock = threading.RLock()
        self._timer: threading.Timer | None = None
        self._seq = 0
        self.rows_written = 0
        self.files: list[str] = []

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        with self._lock:
            self._rows.extend(rows)
            self._maybe_flush()

    def append(self, row: dict[str, Any]) -> None:
        """One row (the hot path of the trial recorder)."""
        with self._lock:
            self._rows.append(row)
            n = len(self._rows)
            if n >= self.flush_rows:
                self.flush()
            elif n == 1:
                self._arm()

    def _arm(self) -> None:
        """Flush the buffer `flush_seconds` after its first row at the latest."""
        if self._timer is None and self.flush_seconds > 0:
            self._timer = threading.Timer(self.flush_seconds, self._on_timer)
            self._timer.daemon = True
            self._timer.start()

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
            self.flush()

    def _maybe_flush(self) -> None:
        if (len(self._rows) >= self.flush_rows
                or time.monotonic() - self._last_flush >= self.flush_seconds):
            self.flush()
        elif self._rows:
            self._arm()

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        self._last_flush = time.monotonic()
        if not self._rows:
            return
        table = pa.Table.from_pylist(self._rows, schema=self.schema)
        final = self.location.write_part(
            self.directory, f"part-{self._seq:05d}-{uuid.uuid4().hex[:8]}.parquet", table)
        self._seq += 1
        self.rows_written += len(self._rows)
        self.files.append(final)
        self._rows = []

    def close(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
            if timer is not None:
                timer.cancel()
            self.flush()

    def __enter__(self) -> "PartWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
