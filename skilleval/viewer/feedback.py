"""``feedback.json`` in skill-creator's format (reference §3.10), the one place it is written.

``{"reviews": [{"run_id", "feedback", "timestamp"}], "status": "in_progress" | "complete"}``
where ``run_id`` is the run folder relative to the workspace with ``/`` replaced by ``-``.
Auto-saves keep only non-empty feedback with ``status: in_progress``; "submit" lists every run
(``""`` meaning it looked fine) with ``status: complete``. Writes are atomic (a temp file of
their own, fsync, rename) and serialised across threads and processes (two `skilleval view`
on one workspace), so a reload always reads a whole file and no save undoes another's. A
``feedback.json`` that exists but cannot be read is never overwritten: the save is refused
and says why (it may hold a person's hand-edited reviews).

Two tabs (or two viewers) on one review box must not silently undo each other: a save may say
which text it was typed over (``base``, the box's text as last loaded or saved), and when the
stored text is neither that nor the new text, someone else changed it in between. The save is
refused (`Conflict`, carrying the stored text) and the page asks which one to keep.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator

from skilleval.atomic import write_text_atomic

MAX_FEEDBACK = 20_000  # characters kept per review
_lock = threading.Lock()


def review_id(workspace: Path, run_dir: Path) -> str:
    return run_dir.relative_to(workspace).as_posix().replace("/", "-").replace("\\", "-")


class Unreadable(ValueError):
    """feedback.json exists but is not JSON with a ``reviews`` list: left as it is."""


class Conflict(ValueError):
    """The review was changed elsewhere since `base` was read: nothing written."""

    def __init__(self, current: str) -> None:
        super().__init__("this feedback was changed in another tab or viewer since this page "
                         "loaded it; nothing was overwritten")
        self.current = current


def read(workspace: Path) -> dict[str, Any]:
    """For showing: an unreadable file reads as no feedback (`read_for_update` refuses it)."""
    try:
        return read_for_update(workspace)
    except Unreadable:
        return {"reviews": [], "status": None}


def read_for_update(workspace: Path) -> dict[str, Any]:
    path = workspace / "feedback.json"
    if path.is_symlink():  # a workspace is hostile: its reviews are read from itself only
        raise Unreadable(f"{path} is a symlink; not followed: replace it with the file")
    if not path.exists():
        return {"reviews": [], "status": None}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Unreadable(f"{path} is not readable JSON ({exc}); not overwritten: fix or move it") from None
    if not isinstance(data, dict) or not isinstance(data.get("reviews"), list):
        raise Unreadable(f"{path} has no 'reviews' list (skill-creator's feedback.json format); "
                         "not overwritten: fix or move it")
    return data


def texts(data: dict[str, Any]) -> dict[str, str]:
    """run_id -> feedback text of a read feedback.json (entries that are not objects skipped)."""
    return {str(r.get("run_id")): str(r.get("feedback") or "") for r in data["reviews"]
            if isinstance(r, dict)}


def by_run(workspace: Path) -> dict[str, str]:
    return texts(read(workspace))


def _now() -> str:
    t = dt.datetime.now(dt.timezone.utc)  # one reading: seconds and milliseconds of one instant
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


@contextlib.contextmanager
def _locked(workspace: Path) -> Iterator[None]:
    """This process's threads (a lock) and other processes (flock on a lock file beside it)."""
    lock = workspace / ".feedback.json.lock"
    with _lock:
        try:  # O_NOFOLLOW: a planted symlink would make a save create or touch a file elsewhere
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError:
            if lock.is_symlink():
                raise Unreadable(f"{lock} is a symlink; not followed: remove it") from None
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _write(workspace: Path, data: dict[str, Any]) -> None:
    write_text_atomic(workspace / "feedback.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                      durable=True)


def save(workspace: Path, run: str, text: str, base: str | None = None) -> dict[str, Any]:
    """Auto-save one run's feedback (empty text removes it). With `base` (the text this save was
    typed over), a stored text that is neither `base` nor `text` raises `Conflict`."""
    if len(text) > MAX_FEEDBACK:  # refused, never cut short behind the person's back
        raise ValueError(f"feedback is {len(text):,} characters; at most {MAX_FEEDBACK:,} per run")
    with _locked(workspace):
        data = read_for_update(workspace)
        if base is not None:
            current = texts(data).get(run, "")
            if current not in (base[:MAX_FEEDBACK], text):
                raise Conflict(current)
        reviews = [r for r in data["reviews"] if isinstance(r, dict) and r.get("run_id") != run]
        if text.strip():
            reviews.append({"run_id": run, "feedback": text, "timestamp": _now()})
        out = {"reviews": reviews, "status": "in_progress"}
        _write(workspace, out)
        return out


def submit(workspace: Path, runs: Iterable[str]) -> dict[str, Any]:
    """The final submit: every run listed, status complete."""
    with _locked(workspace):
        have = texts(read_for_update(workspace))
        stamp = _now()
        out = {"reviews": [{"run_id": r, "feedback": have.get(r, ""), "timestamp": stamp} for r in runs],
               "status": "complete"}
        _write(workspace, out)
        return out
