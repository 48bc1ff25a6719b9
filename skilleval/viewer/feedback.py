"""``feedback.json`` in skill-creator's format (reference §3.10), the one place it is written.

``{"reviews": [{"run_id", "feedback", "timestamp"}], "status": "in_progress" | "complete"}``
where ``run_id`` is the run folder relative to the workspace with ``/`` replaced by ``-``.
Auto-saves keep only non-empty feedback with ``status: in_progress``; "submit" lists every run
(``""`` meaning it looked fine) with ``status: complete``. Writes are atomic (temp + rename)
and serialised, so a reload always reads a whole file.
"""
from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path
from typing import Any, Iterable

MAX_FEEDBACK = 20_000  # characters kept per review
_lock = threading.Lock()


def review_id(workspace: Path, run_dir: Path) -> str:
    return run_dir.relative_to(workspace).as_posix().replace("/", "-").replace("\\", "-")


def read(workspace: Path) -> dict[str, Any]:
    try:
        data = json.loads((workspace / "feedback.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"reviews": [], "status": None}
    if not isinstance(data, dict) or not isinstance(data.get("reviews"), list):
        return {"reviews": [], "status": None}
    return data


def by_run(workspace: Path) -> dict[str, str]:
    return {str(r.get("run_id")): str(r.get("feedback") or "") for r in read(workspace)["reviews"]
            if isinstance(r, dict)}


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{dt.datetime.now(dt.timezone.utc).microsecond // 1000:03d}Z"


def _write(workspace: Path, data: dict[str, Any]) -> None:
    path = workspace / "feedback.json"
    tmp = path.with_name(".feedback.json.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def save(workspace: Path, run: str, text: str) -> dict[str, Any]:
    """Auto-save one run's feedback (empty text removes it)."""
    text = text[:MAX_FEEDBACK]
    with _lock:
        data = read(workspace)
        reviews = [r for r in data["reviews"] if isinstance(r, dict) and r.get("run_id") != run]
        if text.strip():
            reviews.append({"run_id": run, "feedback": text, "timestamp": _now()})
        out = {"reviews": reviews, "status": "in_progress"}
        _write(workspace, out)
        return out


def submit(workspace: Path, runs: Iterable[str]) -> dict[str, Any]:
    """The final submit: every run listed, status complete."""
    with _lock:
        have = by_run(workspace)
        stamp = _now()
        out = {"reviews": [{"run_id": r, "feedback": have.get(r, ""), "timestamp": stamp} for r in runs],
               "status": "complete"}
        _write(workspace, out)
        return out
