"""Exit codes of sweep jobs that a Hydra launcher ran in other processes.

The basic launcher runs every job in the CLI's own process, which keeps their codes in a
list. joblib (loky workers), submitit or Ray run them elsewhere, and Hydra drops a job's
return value on the way back, so a failed cell would exit 0. Each job therefore also drops
its code as a small file in a folder the CLI made for this sweep (inherited through the
environment by the workers), and the CLI takes the worst of both.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_DIR = "SKILLEVAL_EXIT_DIR"
_PID = "SKILLEVAL_EXIT_PID"


def record(code: int) -> None:
    """Called by every job; writes a file only when running outside the CLI's process."""
    folder = os.environ.get(_DIR)
    if folder and os.environ.get(_PID) != str(os.getpid()):
        try:
            Path(folder, f"{os.getpid()}-{uuid.uuid4().hex}").write_text(str(int(code)))
        except OSError:  # a remote node without the folder: the CLI cannot see this code
            pass


@contextmanager
def collecting() -> Iterator[list[int]]:
    """Yields a list that holds, after the block, the codes jobs in other processes wrote."""
    folder = tempfile.mkdtemp(prefix="skilleval-exit-")
    saved = {k: os.environ.get(k) for k in (_DIR, _PID)}
    os.environ[_DIR], os.environ[_PID] = folder, str(os.getpid())
    codes: list[int] = []
    try:
        yield codes
    finally:
        for f in Path(folder).iterdir():
            try:
                codes.append(int(f.read_text()))
            except ValueError:
                codes.append(1)
        shutil.rmtree(folder, ignore_errors=True)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
