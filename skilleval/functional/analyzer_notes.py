"""skill-creator's analyzer in benchmark mode (observations only), asked once per benchmark.

A rerun of a finished functional_eval takes every execution and grade from the store and pays
nothing for them; the analyzer's notes were the one call it still paid. They depend only on
what the analyzer reads (the runs' grades and the run summary, never the run id or the time)
and on the backend that answers, so they are kept in the run's summary under that key, and a
later run that would send the same prompt to the same backend reuses them and says so.
"""
from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from skilleval import sample_key
from skilleval.functional.prompts import benchmark_analyzer_prompt, extract_json, validate_notes

if TYPE_CHECKING:
    from skilleval.app import JobContext

#: where a run's summary keeps its notes (``runs.summary_json``)
SUMMARY_FIELD = "analyzer_notes"


def analyzer_prompt_for(bench: dict[str, Any]) -> str:
    slim = {"runs": [{k: r[k] for k in ("eval_id", "eval_name", "configuration", "run_number",
                                         "result", "expectations")} for r in bench["runs"]],
            "run_summary": bench["run_summary"]}
    return benchmark_analyzer_prompt(slim)


def notes_key(prompt: str, identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps([prompt, identity], sort_keys=True, default=str)
                          .encode()).hexdigest()


def stored_notes(job: "JobContext", key: str) -> list[str] | None:
    """The notes a finished run kept under ``key``, newest first; None when there are none."""
    if "runs" not in job.store.tables():
        return None
    rows = job.store.query(
        "SELECT summary_json FROM runs WHERE status IN ('done', 'gate_failed') "
        f"AND json_extract_string(summary_json, '$.{SUMMARY_FIELD}.key') = ? "
        "ORDER BY ts DESC LIMIT 1", [key]).to_pylist()
    if not rows:
        return None
    notes = json.loads(rows[0]["summary_json"])[SUMMARY_FIELD].get("notes")
    return [str(n) for n in notes] if isinstance(notes, list) else None


async def benchmark_observations(job: "JobContext", backend: Any, bench: dict[str, Any]) -> list[str]:
    """The analyzer's notes on ``bench``, from the store when an earlier run asked the same."""
    prompt = analyzer_prompt_for(bench)
    key = notes_key(prompt, job.backend.identity())
    cached = stored_notes(job, key)
    if cached is not None:
        return cached + ["analyzer notes reused from an earlier run of the same benchmark (no call)"]
    try:
        # keyed: a simulator answers the same benchmark the same way on every run
        with sample_key.keyed("benchmark-analyzer"):
            reply = await backend.complete(prompt, max_tokens=2048)
        notes = [f"analyzer: {n}" for n in validate_notes(extract_json(reply.text))]
    except Exception as exc:  # noqa: BLE001 - notes are optional; say why they are missing
        return [f"analyzer notes unavailable: {type(exc).__name__}: {exc}"]
    job.summary[SUMMARY_FIELD] = {"key": key, "notes": notes}
    return notes
