"""Exit codes of sweep jobs that a Hydra launcher ran in other processes.

The basic launcher runs every job in the CLI's own process, which keeps their codes in a
list. joblib (loky workers), submitit or Ray run them elsewhere, and Hydra drops a job's
return value on the way back, so a failed cell would exit 0. Each job therefore also drops
its code as a small file in a folder the CLI made for this sweep (inherited through the
environment by the workers), and the CLI takes the worst of both. A job that failed with an
error leaves its one line there too (not printed by the worker, whose stderr may be a log
file on another node), so the CLI prints it, once per distinct line (``sweep_errors``).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

_DIR = "SKILLEVAL_EXIT_DIR"
_PID = "SKILLEVAL_EXIT_PID"


@dataclass
class Collected:
    codes: list[int] = field(default_factory=list)
    #: (job number, error line) of the jobs that failed with an error, by job number
    errors: list[tuple[int, str]] = field(default_factory=list)
    #: the jobs' rows of the sweep table (`sweep_table.JobOutcome.to_wire`)
    outcomes: list[dict] = field(default_factory=list)


def elsewhere() -> bool:
    """True in a job a launcher runs outside the CLI's process (its codes go through files)."""
    return bool(os.environ.get(_DIR)) and os.environ.get(_PID) != str(os.getpid())


def record(code: int, error: str | None = None, job_num: int = 0, outcome: dict | None = None) -> bool:
    """Called by every job; writes a file only when running outside the CLI's process.
    Returns True if it did (then `error`, if any, is the CLI's to print, and `outcome` its
    row of the sweep table)."""
    if not elsewhere():
        return False
    try:
        Path(os.environ[_DIR], f"{os.getpid()}-{uuid.uuid4().hex}").write_text(
            json.dumps({"code": int(code), "error": error, "job": int(job_num), "outcome": outcome}))
    except OSError:  # a remote node without the folder: the CLI cannot see this code
        return False
    return True


@contextmanager
def collecting() -> Iterator[Collected]:
    """Yields what, after the block, the jobs in other processes wrote: codes and errors."""
    folder = tempfile.mkdtemp(prefix="skilleval-exit-")
    saved = {k: os.environ.get(k) for k in (_DIR, _PID)}
    os.environ[_DIR], os.environ[_PID] = folder, str(os.getpid())
    got = Collected()
    try:
        yield got
    finally:
        for f in Path(folder).iterdir():
            try:
                entry = json.loads(f.read_text())
                got.codes.append(int(entry["code"]))
                if entry.get("error"):
                    got.errors.append((int(entry.get("job", 0)), str(entry["error"])))
                if isinstance(entry.get("outcome"), dict):
                    got.outcomes.append(entry["outcome"])
            except (ValueError, KeyError, TypeError):
                got.codes.append(1)
        got.errors.sort()
        shutil.rmtree(folder, ignore_errors=True)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
