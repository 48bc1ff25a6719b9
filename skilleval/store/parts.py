"""Which Parquet parts of a table are live.

Compaction (`skilleval.store.compact`) merges parts into one ``compact-*.parquet`` whose
footer lists, under ``skilleval.replaces``, the parts it holds (paths relative to the table
folder). The moment that file exists, the parts it lists are dead, whether or not they
have been deleted yet. Readers apply this rule, so between writing the merged part and
deleting the old ones (or after a kill in between) nobody sees a row twice, and nobody
sees it zero times: the merged part is written whole (rename / one PUT) before it counts.
"""
from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from threading import Lock

from skilleval.store.fs import StoreLocation

COMPACT_PREFIX = "compact-"
REPLACES_KEY = b"skilleval.replaces"

# A compacted part never changes (unique names, written once), so its list is cached by path.
_replaces_cache: dict[str, tuple[str, ...]] = {}
_cache_lock = Lock()


@dataclass(frozen=True)
class TableParts:
    live: list[str]  # full paths, sorted
    dead: list[str]  # replaced by a compacted part but not deleted yet


def is_compacted(path: str) -> bool:
    return posixpath.basename(path.replace("\\", "/")).startswith(COMPACT_PREFIX)


def relative(table_dir: str, path: str) -> str:
    return posixpath.relpath(path.replace("\\", "/"), table_dir.replace("\\", "/"))


def replaces(loc: StoreLocation, path: str) -> tuple[str, ...]:
    """The relative paths a compacted part supersedes (empty for an ordinary part)."""
    if not is_compacted(path):
        return ()
    key = f"{loc.url}|{path}"
    with _cache_lock:
        hit = _replaces_cache.get(key)
    if hit is not None:
        return hit
    meta = loc.metadata(path).metadata or {}
    value = tuple(json.loads(meta.get(REPLACES_KEY, b"[]")))
    with _cache_lock:
        _replaces_cache[key] = value
    return value


def table_parts(loc: StoreLocation, table_dir: str) -> TableParts:
    files = loc.find(table_dir)
    dead_rel: set[str] = set()
    for f in files:
        dead_rel.update(replaces(loc, f))
    live, dead = [], []
    for f in files:
        (dead if relative(table_dir, f) in dead_rel else live).append(f)
    return TableParts(live, dead)
