"""Advisory leases on a local store: who is alive, and who is already doing a piece of work.

A lease is an ``flock`` held on a file under the store root for as long as its holder works.
The kernel drops the lock when the process dies (even by ``kill -9``), so a lease is also a
heartbeat that needs no thread: a file whose lock can be taken belongs to a dead process.

* ``_live/<run_id>.lock``: held by a running job. A ``runs`` row still saying ``running``
  whose lease is not held is shown as ``stale`` (killed, or crashed before its last write).
* ``_leases/<digest>.lock``: held while a trial runner evaluates one set of trial keys; a
  second identical run waits for it and then reads those trials from the store instead of
  paying for them again.

Why flock and not a lock service: parallel jobs on one machine share a store folder and
nothing else. (flock is per machine; a store on a network share gets no sharing, only the
same behaviour as before.)
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

LIVE = "_live"
LEASES = "_leases"


class Lease:
    """An exclusive flock on `path` (created if needed); `release` unlinks it when asked."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self, note: dict[str, object] | None = None) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        if note is not None:
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps(note).encode())
        self._fd = fd
        return True

    def release(self, unlink: bool = True) -> None:
        if self._fd is None:
            return
        if unlink:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


def held(path: Path) -> bool:
    """True when some process holds the lease at `path` (its holder is alive)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def run_lease(root: Path, run_id: str) -> Lease | None:
    """Take the liveness lease of `run_id` (None when the store is not a local folder)."""
    if not isinstance(root, Path):
        return None
    lease = Lease(root / LIVE / f"{run_id}.lock")
    try:
        ok = lease.try_acquire({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()})
    except OSError:
        return None
    return lease if ok else None


def alive_runs(root: Path) -> list[str]:
    """Run ids whose liveness lease is held right now."""
    live = root / LIVE
    if not isinstance(root, Path) or not live.is_dir():
        return []
    return sorted(p.stem for p in live.glob("*.lock") if held(p))
