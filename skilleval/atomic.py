"""Writing a user's file whole or not at all, keeping its permissions.

A temporary file in the same folder, then a rename: a crash never leaves half an eval set or
half a feedback.json. Why the mode is set by hand: `tempfile.mkstemp` creates the file 0600,
and the rename carried that over, so an eval set saved from `review-evals`, a drafted set or
an imported workspace's feedback.json lost its group and other read bits (seen: 644 -> 600).
"""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def write_text_atomic(path: Path, text: str, *, durable: bool = False) -> None:
    """Replace `path` with `text` (UTF-8). The file keeps its permission bits; a new file gets
    what the process's umask gives. `durable`: fsync before the rename."""
    with atomic_writer(path, durable=durable) as fh:
        fh.write(text.encode("utf-8"))


@contextlib.contextmanager
def atomic_writer(path: Path, *, durable: bool = False) -> Iterator[BinaryIO]:
    """A binary file that replaces `path` when the block ends without an error, and is
    removed when it raises (`path` is then left as it was). Permissions as `write_text_atomic`'s."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process's umask, read without setting it (`os.umask` sets it, process-wide, which a
    threaded server must not do even for a moment)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022
