"""Where the store lives: a local folder or any fsspec URL (``s3://bucket/prefix``, ...).

The store's tables are Parquet parts; this module is the one place that knows how a part is
written, listed, read and removed, so the writer, the catalog and compaction work the same
on a laptop and on object storage.

Why fsspec and not DuckDB's httpfs: httpfs is an extension DuckDB downloads at run time,
which locked-down machines (and this project's CI) cannot do. An fsspec filesystem is a
pip-installed package, and ``duckdb.register_filesystem`` lets DuckDB read through it.

Credentials and endpoints come only from the standard AWS environment (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_PROFILE``, ...), which botocore reads itself: nothing here takes
them from the config, and nothing writes them anywhere.
"""
from __future__ import annotations

import io
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from skilleval.errors import HarnessError, UserError

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# Schemes whose filesystem lives in a skilleval extra, so the hint can name it.
_EXTRAS = {"s3": "s3", "s3a": "s3"}


@dataclass(frozen=True)
class StoreLocation:
    """A store root: ``url`` as the user gave it (normalised), ``path`` inside ``fs``."""

    url: str
    path: str
    fs: Any  # fsspec.AbstractFileSystem, or None for a plain local folder
    protocol: str = "file"

    @property
    def is_local(self) -> bool:
        return self.fs is None

    def join(self, *parts: str) -> str:
        return "/".join([self.path.rstrip("/"), *parts])

    def uri(self, path: str) -> str:
        """`path` (inside the filesystem) as a URL DuckDB's registered filesystem resolves."""
        return path if self.is_local else f"{self.protocol}://{path}"

    # -- writing ------------------------------------------------------------------------

    def write_part(self, directory: str, name: str, table: pa.Table) -> str:
        """Write `table` as `directory/name`, all or nothing, and return its path.

        Local: to ``*.tmp`` then rename (readers glob ``*.parquet``). Object stores: one PUT of
        the whole file, which an object store makes visible only once complete.
        """
        final = f"{directory.rstrip('/')}/{name}"
        if self.is_local:
            Path(directory).mkdir(parents=True, exist_ok=True)
            tmp = f"{final}.tmp"
            pq.write_table(table, tmp, compression="zstd", write_page_checksum=True)  # `store check` verifies
            os.replace(tmp, final)
            return final
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="zstd", write_page_checksum=True)
        self.fs.pipe_file(final, buf.getvalue())
        return final

    def remove(self, paths: list[str]) -> None:
        if not paths:
            return
        if self.is_local:
            for p in paths:
                try:
                    os.remove(p)
                except FileNotFoundError:
                    pass
            return
        try:
            self.fs.rm(paths)
        except FileNotFoundError:
            pass

    # -- reading ------------------------------------------------------------------------

    def find(self, directory: str, suffix: str = ".parquet") -> list[str]:
        """Every file under `directory` ending in `suffix`, sorted (``[]`` if none)."""
        if self.is_local:
            if not os.path.isdir(directory):
                return []
            out = [os.path.join(d, f) for d, _, files in os.walk(directory)
                   for f in files if f.endswith(suffix)]
            return sorted(out)
        try:
            self.fs.invalidate_cache(directory)
            return sorted(p for p in self.fs.find(directory) if p.endswith(suffix))
        except FileNotFoundError:
            return []

    def subdirs(self) -> list[str]:
        """Names of the folders directly under the root."""
        if self.is_local:
            if not os.path.isdir(self.path):
                return []
            return sorted(e.name for e in os.scandir(self.path) if e.is_dir())
        try:
            self.fs.invalidate_cache(self.path)
            entries = self.fs.ls(self.path, detail=True)
        except FileNotFoundError:
            return []
        return sorted(e["name"].rstrip("/").rsplit("/", 1)[-1] for e in entries
                      if e.get("type") == "directory")

    def size(self, path: str) -> int:
        return os.path.getsize(path) if self.is_local else int(self.fs.size(path))

    def metadata(self, path: str) -> pq.FileMetaData:
        return self._parquet(path, pq.read_metadata)

    def read_table(self, path: str) -> pa.Table:
        return self._parquet(path, pq.read_table)

    def _parquet(self, path: str, read: Any) -> Any:
        """`read` (a pyarrow reader) applied to the part at `path`; a part pyarrow cannot
        read is `damaged` (one line, exit 3), not a pyarrow traceback."""
        try:
            if self.is_local:
                return read(path)
            with self.fs.open(path, "rb") as fh:
                return read(fh)
        except pa.ArrowException as exc:
            raise self.damaged(path, exc) from None

    def damaged(self, what: str, exc: BaseException) -> HarnessError:
        """The one-line error for a part that cannot be read (exit 3), with how to repair it:
        a local store moves damaged parts aside itself (`store check --quarantine`); an object
        store is not repaired automatically."""
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        fix = ("move it aside with `skilleval store check --quarantine`" if self.is_local else
               "delete that object (a remote store is not repaired automatically), then rerun")
        return HarnessError(f"the store {self.url} holds a part that cannot be read ({first}): {fix}")

    def register(self, con: Any) -> None:
        """Let a DuckDB connection read this store's URLs."""
        if not self.is_local:
            con.register_filesystem(self.fs)

    def unique_name(self, prefix: str) -> str:
        return f"{prefix}-{uuid.uuid4().hex[:12]}.parquet"


def open_location(root: str) -> StoreLocation:
    """Parse `root` (a path, ``file://``, or an fsspec URL) and check a remote one is reachable.

    Any scheme fsspec cannot serve is exit 2 with one line: a root such as ``s3://b/p`` must
    never turn into a local folder named ``s3:``.
    """
    m = _SCHEME.match(root)
    if m is None or m.group(1).lower() == "file":
        local = root[len("file://"):] if m else root
        path = Path(os.path.expandvars(os.path.expanduser(local))).resolve()
        return StoreLocation(str(path), str(path), None)
    protocol = m.group(1).lower()
    try:
        import fsspec
        from fsspec.registry import known_implementations
    except ImportError:
        raise UserError(f"store.root {root!r}: object stores need fsspec; "
                        f"install it with: pip install \"skilleval[s3]\"") from None
    if protocol not in known_implementations and protocol not in fsspec.available_protocols():
        raise UserError(f"store.root {root!r}: unsupported URL scheme {protocol!r} "
                        "(use a local path, s3://bucket/prefix, or another fsspec URL)")
    try:
        fs = fsspec.filesystem(protocol)
    except ImportError as exc:
        extra = _EXTRAS.get(protocol)
        hint = f'pip install "skilleval[{extra}]"' if extra else f"install the fsspec backend ({exc})"
        raise UserError(f"store.root {root!r}: {protocol}:// needs a package that is not "
                        f"installed; {hint}") from None
    path = fs._strip_protocol(root).rstrip("/")
    if not path:
        raise UserError(f"store.root {root!r}: no bucket or path after {protocol}://")
    loc = StoreLocation(f"{protocol}://{path}", path, fs, protocol)
    _check_reachable(loc, root)
    return loc


def _check_reachable(loc: StoreLocation, root: str) -> None:
    """One listing of the bucket, so a wrong endpoint, missing credentials or a missing
    bucket is exit 2 before any paid call, not a traceback after one."""
    bucket = loc.path.split("/", 1)[0]
    fs = loc.fs
    if loc.protocol in ("s3", "s3a"):  # fail in seconds, not after botocore's back-off
        import fsspec

        fs = fsspec.filesystem(loc.protocol, skip_instance_cache=True, config_kwargs={
            "retries": {"max_attempts": 2, "mode": "standard"}, "connect_timeout": 5})
    try:
        fs.ls(bucket, refresh=True)
    except FileNotFoundError:
        raise UserError(f"store.root {root!r}: bucket {bucket!r} does not exist at "
                        f"{_endpoint()}") from None
    except Exception as exc:  # noqa: BLE001 - botocore/aiohttp errors vary; all mean "unusable"
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise UserError(f"store.root {root!r}: cannot use the object store at {_endpoint()} "
                        f"({type(exc).__name__}: {first}); check AWS_ENDPOINT_URL and the "
                        "AWS credentials in the environment") from None


def _endpoint() -> str:
    return (os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
            or "the default AWS endpoint")


def local_location() -> StoreLocation:
    """The local filesystem, for writers given a plain folder."""
    return StoreLocation("", "", None)
