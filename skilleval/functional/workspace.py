"""Write runs in skill-creator's workspace layout, so its viewer and aggregator read them.

::

    <workspace>/iteration-N/
        benchmark.json  benchmark.md
        eval-<name>/eval_metadata.json
        eval-<name>/<arm>/run-<k>/outputs/...      (files the executor wrote)
        eval-<name>/<arm>/run-<k>/outputs/transcript.md  (hidden by the viewer)
        eval-<name>/<arm>/run-<k>/outputs/metrics.json
        eval-<name>/<arm>/run-<k>/grading.json  timing.json
        eval-<name>/<arm>/run-<k>/execution_error.json  (instead of grading.json: not graded)

``eval_metadata.json`` is also written into each configuration and run folder, because the
viewer only looks in a run folder and its parent (skill-creator B15).
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from skilleval.execution import output_rel, resolve_inside
from skilleval.functional.runner import RunRecord

#: marks a run folder whose execution errored or timed out (it has no grading.json)
ERROR_FILE = "execution_error.json"
#: what we write into a run's outputs/ beside the model's files (skill-creator's layout)
BOOKKEEPING = ("transcript.md", "metrics.json")
#: where a model output goes when its usual place is taken (see workspace_paths)
DISPLACED = "_sandbox"
#: A valid run none of whose expectations could be graded (it has none, or every grade is a
#: judge error): grading.json's content (pass_rate null) under another name. Why not
#: grading.json: skill-creator's aggregator would average its pass_rate as a 0 % run (an error
#: scored as a failure), and crashes on null; without grading.json it skips the run, as it
#: skips an errored one.
UNGRADED_FILE = "ungraded.json"


def next_iteration(workspace: Path) -> int:
    nums = [int(m.group(1)) for p in workspace.glob("iteration-*")
            if (m := re.fullmatch(r"iteration-(\d+)", p.name))]
    return max(nums, default=0) + 1


def _eval_id(case_id: str) -> Any:
    return int(case_id) if case_id.isdigit() else case_id


def grading_json(rec: RunRecord) -> dict[str, Any]:
    res = rec.result
    passed, failed, errors = rec.counts
    total = passed + failed
    exps = [{"text": v.text, "passed": v.passed, "evidence": v.evidence if v.passed is not None
             else f"JUDGE ERROR: {v.error}", **({"judge_error": v.error} if v.passed is None else {}),
             **({"agreement": v.agreement, "samples": v.samples, "disagreement": v.disagreement}
                if v.samples > 1 else {})} for v in rec.verdicts]
    return {
        "expectations": exps,
        "summary": {"passed": passed, "failed": failed, "total": total,
                    "pass_rate": round(passed / total, 4) if total else None, "judge_errors": errors},
        "execution_metrics": metrics_json(rec),
        # No total_duration_seconds here: skill-creator's aggregator reads timing.json (time
        # *and* tokens) only when this one is missing or 0, and otherwise reports the outputs'
        # characters as tokens (it turned a +2354-token delta into -47). timing.json has both.
        "timing": {"executor_duration_seconds": round(res.duration_s, 3),
                   "grader_duration_seconds": round(rec.grader_seconds, 3)},
        "claims": rec.claims,
        "user_notes_summary": rec.user_notes or {"uncertainties": [], "needs_review": [], "workarounds": []},
        "eval_feedback": rec.eval_feedback or {"suggestions": [], "overall": "No suggestions"},
    }


def metrics_json(rec: RunRecord) -> dict[str, Any]:
    res = rec.result
    return {"tool_calls": res.tool_calls, "total_tool_calls": sum(res.tool_calls.values()),
            "total_steps": res.turns, "files_created": list(workspace_paths([o.path for o in res.outputs]).values()),
            "errors_encountered": res.errors, "output_chars": sum(o.size for o in res.outputs),
            "transcript_chars": len(res.transcript)}


def run_entry(rec: RunRecord) -> dict[str, Any]:
    """One `benchmark.json` `runs[]` entry (skill-creator keys plus a few of ours).

    An errored or timed-out execution gets an entry with no ``result`` at all: it was not
    graded, and `build_benchmark` lists it under ``errored_runs``, never in ``runs``.
    """
    res = rec.result
    if not rec.valid:
        return {"eval_id": _eval_id(rec.case.id), "eval_name": rec.case.name,
                "configuration": rec.arm.name, "run_number": rec.repeat + 1, "status": res.status,
                "error": res.error, "execution_key": res.key,
                "time_seconds": round(res.duration_s, 3), "tokens": res.total_tokens}
    passed, failed, errors = rec.counts
    total = passed + failed
    return {
        "eval_id": _eval_id(rec.case.id), "eval_name": rec.case.name,
        "configuration": rec.arm.name, "run_number": rec.repeat + 1,
        "result": {"pass_rate": round(passed / total, 4) if total else None, "passed": passed,
                   "failed": failed, "total": total, "time_seconds": round(res.duration_s, 3),
                   "tokens": res.total_tokens, "tool_calls": sum(res.tool_calls.values()),
                   "errors": res.errors, "judge_errors": errors},
        "expectations": [{"text": v.text, "passed": v.passed, "evidence": v.evidence,
                          **({"disagreement": True} if v.disagreement else {})} for v in rec.verdicts],
        "notes": [] if res.ok else [f"execution {res.status}: {res.error or ''}".strip()],
        "skill_fired": res.skill_fired, "status": res.status, "execution_key": res.key,
    }


def workspace_paths(paths: list[str]) -> dict[str, str]:
    """Sandbox path of each output -> its path inside the run's ``outputs/``.

    Usually ``output_rel`` (``outputs/x.csv`` and a top-level ``x.csv`` both become
    ``x.csv``). Why not always: the model may write ``outputs/transcript.md`` or
    ``outputs/metrics.json`` (ours would overwrite it, and the viewer hides those names), or
    both ``x.csv`` and ``outputs/x.csv`` (one would overwrite the other). Such an output keeps
    its whole sandbox path under ``_sandbox/``, so every output the run wrote is in the
    workspace, visible and unchanged."""
    taken = set(BOOKKEEPING)
    out: dict[str, str] = {}
    for path in sorted(paths, key=lambda p: (not p.startswith("outputs/"), p)):
        rel = output_rel(path)
        if rel in taken or rel == DISPLACED or rel.startswith(DISPLACED + "/"):
            rel = f"{DISPLACED}/{path}"
        taken.add(rel)
        out[path] = rel
    return out


def set_aside_feedback(iteration: Path, run_id: str) -> Path | None:
    """An iteration folder about to get new outputs (``functional.iteration=N`` naming one that
    exists): the feedback a person gave on its earlier outputs would read as feedback on the
    new ones. It is kept beside them under another name, and the new outputs start without."""
    fb = iteration / "feedback.json"
    if not fb.is_file():
        return None
    kept = iteration / f"feedback.before-{run_id}.json"
    fb.replace(kept)
    return kept


def write_workspace(root: Path, records: list[RunRecord], benchmark: dict[str, Any] | None,
                    benchmark_md: str | None, iteration: int | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    it = root / f"iteration-{iteration or next_iteration(root)}"
    it.mkdir(parents=True, exist_ok=True)
    for rec in records:
        if rec.result is None:
            continue
        eval_dir = it / rec.case.dir_name
        meta = {"eval_id": _eval_id(rec.case.id), "eval_name": rec.case.name,
                "prompt": rec.case.prompt, "assertions": [e.text for e in rec.case.expectations]}
        run = eval_dir / rec.arm.name / f"run-{rec.repeat + 1}"
        out = run / "outputs"
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for d in (eval_dir, eval_dir / rec.arm.name, run):
            _dump(d / "eval_metadata.json", meta)
        for o, rel in workspace_paths([o.path for o in rec.result.outputs]).items():
            src = resolve_inside(rec.request.sandbox, o)
            if src.is_file():
                dst = out / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
        (out / "transcript.md").write_text(rec.result.transcript, encoding="utf-8")
        _dump(out / "metrics.json", metrics_json(rec))
        if rec.valid:
            (run / ERROR_FILE).unlink(missing_ok=True)
            grading = grading_json(rec)
            keep, drop = ("grading.json", UNGRADED_FILE) if grading["summary"]["total"] else \
                (UNGRADED_FILE, "grading.json")
            (run / drop).unlink(missing_ok=True)
            _dump(run / keep, grading)
        else:
            # No grading.json: skill-creator's aggregator skips a run without one (with a
            # warning), so an error is never averaged in as a 0% run. The marker says why.
            (run / "grading.json").unlink(missing_ok=True)
            (run / UNGRADED_FILE).unlink(missing_ok=True)
            _dump(run / ERROR_FILE, {"status": rec.result.status, "error": rec.result.error,
                                     "graded": False, "execution_key": rec.result.key})
        _dump(run / "timing.json", {
            "total_tokens": rec.result.total_tokens, "duration_ms": int(rec.result.duration_s * 1000),
            "total_duration_seconds": round(rec.result.duration_s, 3),
            "executor_duration_seconds": round(rec.result.duration_s, 3),
            "grader_duration_seconds": round(rec.grader_seconds, 3)})
    if benchmark is not None:
        _dump(it / "benchmark.json", benchmark)
    if benchmark_md is not None:
        (it / "benchmark.md").write_text(benchmark_md, encoding="utf-8")
    return it


def _dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
