"""Store tables of functional evals: ``executions``, ``grades``, ``comparisons``.

One ``executions`` row per task run (its key is the content-addressed execution key), one
``grades`` row per expectation per judge per execution (key = execution key + judge identity
+ expectation + samples), one ``comparisons`` row per blind A/B pair. Output file contents
are kept by hash under ``<store root>/blobs/`` so workspaces and comparisons can be rebuilt
from the store without re-running anything.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

import pyarrow as pa

from skilleval.execution import ExecutionResult, OutputFile
from skilleval.store.catalog import register_schema
from skilleval.store.schema import IDENTITY

_OUTPUT = pa.struct([("path", pa.string()), ("sha256", pa.string()), ("size", pa.int64())])

EXECUTIONS = pa.schema(IDENTITY + [
    ("key", pa.string()), ("backend", pa.string()), ("model", pa.string()),
    ("skill", pa.string()), ("skill_hash", pa.string()), ("arm", pa.string()), ("role", pa.string()),
    ("eval_id", pa.string()), ("eval_name", pa.string()), ("repeat", pa.int32()),
    ("prompt", pa.string()), ("status", pa.string()), ("skill_fired", pa.bool_()),
    ("fired_skills", pa.list_(pa.string())), ("duration_s", pa.float64()),
    ("input_tokens", pa.int64()), ("output_tokens", pa.int64()), ("total_tokens", pa.int64()),
    ("cost_usd", pa.float64()), ("tool_calls_json", pa.string()), ("total_tool_calls", pa.int32()),
    ("turns", pa.int32()), ("errors", pa.int32()), ("outputs", pa.list_(_OUTPUT)),
    ("transcript", pa.string()), ("settings_json", pa.string()), ("effective_json", pa.string()),
    ("error", pa.string()), ("backend_version", pa.string()), ("source", pa.string()),
])

GRADES = pa.schema(IDENTITY + [
    ("key", pa.string()), ("execution_key", pa.string()), ("judge", pa.string()),
    ("skill", pa.string()), ("arm", pa.string()), ("role", pa.string()), ("eval_id", pa.string()),
    ("eval_name", pa.string()), ("repeat", pa.int32()), ("expectation_index", pa.int32()),
    ("expectation", pa.string()), ("spec_json", pa.string()), ("status", pa.string()),
    ("passed", pa.bool_()), ("evidence", pa.string()), ("judge_error", pa.string()),
    ("samples", pa.int32()), ("agreement", pa.float64()), ("disagreement", pa.bool_()),
    ("claims_json", pa.string()), ("eval_feedback_json", pa.string()),
    ("user_notes_json", pa.string()), ("judge_calls", pa.int32()), ("grader_seconds", pa.float64()),
    ("source", pa.string()),
])

COMPARISONS = pa.schema(IDENTITY + [
    ("key", pa.string()), ("skill", pa.string()), ("eval_id", pa.string()), ("eval_name", pa.string()),
    ("repeat", pa.int32()), ("arm_primary", pa.string()), ("arm_baseline", pa.string()),
    ("execution_primary", pa.string()), ("execution_baseline", pa.string()),
    ("winner_arm", pa.string()), ("order1_winner_arm", pa.string()),
    ("order2_winner_arm", pa.string()), ("consistent", pa.bool_()),
    ("score_primary", pa.float64()), ("score_baseline", pa.float64()), ("status", pa.string()),
    ("error", pa.string()), ("comparison_json", pa.string()), ("analysis_json", pa.string()),
])

register_schema("executions", EXECUTIONS)
register_schema("grades", GRADES)
register_schema("comparisons", COMPARISONS)


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def outcome_digest(res: ExecutionResult) -> str:
    """What a judge sees of an execution: status, output files and transcript. Part of every
    grade and comparison key, so a retried (or re-run) execution is never judged by the
    verdicts of an earlier attempt that had the same execution key."""
    return digest(res.status, sorted((o.path, o.sha256) for o in res.outputs),
                  hashlib.sha256(res.transcript.encode("utf-8", "replace")).hexdigest())


def execution_row(ident: dict[str, Any], res: ExecutionResult, **meta: Any) -> dict[str, Any]:
    return {
        **ident, "ts": now(), "key": res.key, **meta, "status": res.status,
        "skill_fired": res.skill_fired, "fired_skills": list(res.fired_skills),
        "duration_s": res.duration_s, "input_tokens": res.input_tokens,
        "output_tokens": res.output_tokens, "total_tokens": res.total_tokens, "cost_usd": res.cost_usd,
        "tool_calls_json": json.dumps(res.tool_calls, sort_keys=True),
        "total_tool_calls": sum(res.tool_calls.values()), "turns": res.turns, "errors": res.errors,
        "outputs": [{"path": o.path, "sha256": o.sha256, "size": o.size} for o in res.outputs],
        "transcript": res.transcript,
        "effective_json": json.dumps(res.effective_settings, sort_keys=True) if res.effective_settings else None,
        "error": res.error, "backend_version": res.backend_version,
    }


def execution_from_row(row: dict[str, Any]) -> ExecutionResult:
    eff = row.get("effective_json")
    return ExecutionResult(
        key=row["key"], status=row["status"], transcript=row.get("transcript") or "",
        outputs=tuple(OutputFile(o["path"], o["sha256"], o["size"]) for o in row.get("outputs") or []),
        duration_s=row.get("duration_s") or 0.0, input_tokens=row.get("input_tokens") or 0,
        output_tokens=row.get("output_tokens") or 0, cost_usd=row.get("cost_usd") or 0.0,
        tool_calls=json.loads(row.get("tool_calls_json") or "{}"), turns=row.get("turns") or 0,
        errors=row.get("errors") or 0, skill_fired=row.get("skill_fired"),
        fired_skills=tuple(row.get("fired_skills") or ()), error=row.get("error"),
        effective_settings=json.loads(eff) if eff else None,
        backend_version=row.get("backend_version"),
    )


def rows_by_key(table: pa.Table) -> dict[str, dict[str, Any]]:
    if "key" not in table.column_names:
        return {}
    return {r["key"]: r for r in table.to_pylist()}
