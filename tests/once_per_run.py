"""`once_per_run`: an expensive, read-only set-up made once per pytest run, not once per
pytest-xdist worker.

Why: xdist's default (``load``) scheduling hands a module's tests to both workers in small
chunks, so a module- or session-scoped fixture is set up on each worker that runs one of its
tests: a 30 s set-up (a real claude CLI run, a batch of experiment runs) is paid twice. Here
the first worker to need it builds it under a file lock in the run's shared temporary folder
and pickles its value; the other worker waits for the lock and reads the value (waiting costs
no CPU, which the builder then has to itself). Without xdist it is an ordinary build.

Only for what tests read: a value and files under `folder` that no test writes to (a test
that writes gets its own copy or its own run)."""
from __future__ import annotations

import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from filelock import FileLock

T = TypeVar("T")


def shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's temporary folder every worker sees (a worker's own is one level down, named
    after it: ``popen-gw0``). Checked by name: a pytest that a test starts inherits
    PYTEST_XDIST_WORKER, and its basetemp's parent is shared by every run."""
    base = tmp_path_factory.getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return base.parent if worker and base.name.endswith(f"-{worker}") else base


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str,
                 build: Callable[[Path], T]) -> T:
    """``build(folder)`` once per run; every caller gets (a pickled copy of) its value.

    A build that raises leaves nothing behind: the next caller builds again (and fails the
    same way, with its own traceback), so a broken set-up fails every test that needs it."""
    root = shared_root(tmp_path_factory)
    folder, value_file = root / f"once-{name}", root / f"once-{name}.pickle"
    with FileLock(str(root / f"once-{name}.lock")):
        if value_file.exists():
            return pickle.loads(value_file.read_bytes())
        if folder.exists():  # a build that failed part-way
            shutil.rmtree(folder)
        folder.mkdir()
        value = build(folder)
        value_file.write_bytes(pickle.dumps(value))
        return value
