"""Data of the Functional pages (outputs, benchmark, comparison) from a recorded workspace.

A functional run records its workspace (``iteration-N`` in skill-creator's layout) when it
ends; while it runs, its ``executions`` rows are shown from the store instead. The previous
iteration (``iteration-(N-1)`` beside it) supplies the collapsible "previous output and
feedback" of each run, matched by the same relative run folder.
"""
from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path
from typing import Any, Callable

from skilleval.textfiles import shown_name
from skilleval.viewer import feedback, files
from skilleval.viewer.queries import Queries

#: a run folder's grades when nothing could be graded (skilleval.functional.workspace.UNGRADED_FILE;
#: not imported: the viewer does not load the functional package)
UNGRADED_FILE = "ungraded.json"
#: the marker of an errored or timed-out run (skilleval.functional.workspace.ERROR_FILE)
ERROR_FILE = "execution_error.json"


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def workspace_root(iteration: Path) -> Path:
    """The folder holding ``iteration-*`` (what the server may serve files from)."""
    return iteration.parent if re.fullmatch(r"iteration-\d+", iteration.name) else iteration


def is_output_file(path: Path, iteration: Path) -> bool:
    """Whether `path` (a file inside ``workspace_root(iteration)``) is a run's output, the only
    files the pages link: under an ``outputs`` folder, and inside an ``iteration-N`` folder
    when the root is the folder holding those. That folder may be any folder of the user's
    (an import), so nothing else under it (``.ssh``, notes) is served."""
    root = workspace_root(iteration)
    parts = path.relative_to(root.resolve()).parts
    if root != iteration and not (parts and re.fullmatch(r"iteration-\d+", parts[0])):
        return False
    return "outputs" in parts[:-1]


def previous_iteration(iteration: Path) -> Path | None:
    m = re.fullmatch(r"iteration-(\d+)", iteration.name)
    if not m or int(m.group(1)) <= 1:
        return None
    prev = iteration.parent / f"iteration-{int(m.group(1)) - 1}"
    return prev if prev.is_dir() else None


def discover_runs(iteration: Path) -> list[dict[str, Any]]:
    from skilleval.functional.importer import discover  # the one reader of every layout

    try:
        return discover(iteration)
    except Exception:  # noqa: BLE001 - a half-written workspace shows what it has
        return []


def _meta(run: dict[str, Any]) -> dict[str, Any]:
    for d in (run["run_dir"], run["run_dir"].parent, run["eval_dir"]):
        meta = _json(d / "eval_metadata.json")
        if isinstance(meta, dict):
            return meta
    return {}


UrlFor = Callable[[Path], "str | None"]


def file_url(run_id: str, root: Path) -> UrlFor:
    def url(path: Path) -> str | None:
        rel = path.relative_to(root).as_posix()
        # a non-UTF-8 name travels as its own bytes (the server reads it back the same way)
        return (f"/api/file?run={urllib.parse.quote(run_id)}"
                f"&path={urllib.parse.quote(rel, errors='surrogateescape')}")
    return url


def _outputs(run_dir: Path, roots: list[Path], url: UrlFor | None) -> list[dict[str, Any]]:
    out_dir = run_dir / "outputs"
    descs = []
    for rel, problem in files.listing(out_dir, roots):
        if problem is not None:
            descs.append({"name": shown_name(rel), "size": None, "url": None, "kind": "error",
                          "text": problem})
            continue
        path = files.contained(roots, rel, out_dir)
        descs.append(files.describe(path, rel, url=url(path) if url else None,
                                    inline_binary=url is None))
    return descs


def functional_page(q: Queries, run_id: str, iteration: Path | None, *,
                    url: UrlFor | None) -> dict[str, Any]:
    """`url` builds download links (live server); None embeds binaries (static report)."""
    page: dict[str, Any] = {"executions": executions(q, run_id), "evals": [], "workspace": None}
    if iteration is None or not iteration.is_dir():
        return page
    root = workspace_root(iteration)
    roots = [root]
    prev = previous_iteration(iteration)
    fb = feedback.by_run(iteration)
    prev_fb = feedback.by_run(prev) if prev else {}
    evals: dict[str, dict[str, Any]] = {}
    for run in discover_runs(iteration):
        meta = _meta(run)
        ev = evals.setdefault(run["eval_dir"].name, {
            "dir": run["eval_dir"].name, "eval_id": meta.get("eval_id"),
            "name": meta.get("eval_name") or run["eval_dir"].name,
            "prompt": meta.get("prompt") or "(no prompt found)", "runs": []})
        rid = feedback.review_id(iteration, run["run_dir"])
        entry = {"review_id": rid, "config": run["config"], "run_number": run["run_number"],
                 "files": _outputs(run["run_dir"], roots, url),
                 "grading": (_json(run["run_dir"] / "grading.json") or _json(run["run_dir"] / UNGRADED_FILE)
                             or _json(run["run_dir"].parent / "grading.json")),
                 "timing": _json(run["run_dir"] / "timing.json"), "feedback": fb.get(rid, ""),
                 "execution_error": _json(run["run_dir"] / ERROR_FILE)}
        if prev is not None:
            prev_dir = prev / run["run_dir"].relative_to(iteration)
            if prev_dir.is_dir():
                entry["previous"] = {"files": _outputs(prev_dir, roots, url),
                                     "feedback": prev_fb.get(rid, "")}
        ev["runs"].append(entry)
    page.update(workspace=str(iteration), iteration=iteration.name,
                previous_iteration=prev.name if prev else None, evals=list(evals.values()),
                feedback_status=feedback.read(iteration).get("status"),
                benchmark=_json(iteration / "benchmark.json"))
    return page


def executions(q: Queries, run_id: str) -> list[dict[str, Any]]:
    """The run's executions so far (live while it runs), without transcripts."""
    if "executions" not in q.tables():
        return []
    return q.table_rows("executions", run_id, order="eval_name, arm, repeat", columns=(
        "ts, key, eval_id, eval_name, arm, role, repeat, status, skill_fired, duration_s, "
        "total_tokens, cost_usd, errors, error"))


def comparisons(q: Queries, run_id: str) -> list[dict[str, Any]]:
    if "comparisons" not in q.tables():
        return []
    got = q.table_rows("comparisons", run_id, order="eval_name, repeat", columns=(
        "eval_id, eval_name, repeat, arm_primary, arm_baseline, winner_arm, order1_winner_arm, "
        "order2_winner_arm, consistent, score_primary, score_baseline, status, error, "
        "comparison_json, analysis_json"))
    for r in got:
        for k in ("comparison_json", "analysis_json"):
            r[k.removesuffix("_json")] = _loads(r.pop(k))
    return got


def _loads(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None
