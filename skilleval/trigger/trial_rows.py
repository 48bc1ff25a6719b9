"""The store side of trigger trials: one ``trials`` row per backend call, and the valid
outcomes already stored under a set of content-addressed keys (what the runner reuses)."""
from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Sequence

from skilleval.backends.base import Backend
from skilleval.domain import Outcome, Skill, Trial, TrialResult, TriggerCase
from skilleval.store.catalog import Store
from skilleval.store.writer import PartWriter

__all__ = ["Recorder", "load_valid", "trial_rows_recorder"]


Recorder = Callable[[Trial, TrialResult, TriggerCase, Skill], None]


def load_valid(store: Store, table: str, keys: Sequence[str]) -> dict[str, TrialResult]:
    """The stored valid outcomes (never an error or timeout) of `keys` in a trials-shaped table."""
    found = store.lookup(table, "key", list(keys), where="t.outcome IN ('triggered', 'not_triggered')")
    out = {}
    for row in found.to_pylist():
        out[row["key"]] = TrialResult(
            key=row["key"], outcome=Outcome(row["outcome"]), fired=row["fired"],
            position=row["position"], latency_ms=row["latency_ms"] or 0.0,
            input_tokens=row["input_tokens"] or 0, output_tokens=row["output_tokens"] or 0,
            cache_read_tokens=row["cache_read_tokens"] or 0,
            cache_write_tokens=row["cache_write_tokens"] or 0, cost_usd=row["cost_usd"] or 0.0,
            retries=row["retries"] or 0, error=row["error"], backend_version=row["backend_version"],
            shown=tuple(row["shown"]) if row["shown"] is not None else None,
            excerpt=row.get("excerpt"))
    return out


def trial_rows_recorder(writer: PartWriter, identity: dict[str, Any], backend: Backend) -> Recorder:
    """A recorder that streams one `trials` row per backend call into `writer`."""
    utc = dt.timezone.utc

    def record(trial: Trial, r: TrialResult, case: TriggerCase, skill: Skill) -> None:
        writer.append({
            **identity, "ts": dt.datetime.now(utc), "key": trial.key, "backend": backend.name,
            "model": trial.model, "skill": trial.target, "description": skill.description,
            "listing": [s.name for s in trial.listing], "case_id": case.id, "query": trial.query,
            "should_trigger": case.should_trigger, "repeat": trial.repeat,
            "outcome": r.outcome.value, "triggered": r.outcome is Outcome.TRIGGERED,
            "fired": r.fired, "position": r.position, "latency_ms": r.latency_ms,
            "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
            "cache_read_tokens": r.cache_read_tokens, "cache_write_tokens": r.cache_write_tokens,
            "cost_usd": r.cost_usd, "retries": r.retries, "error": r.error,
            "backend_version": r.backend_version,
            "shown": list(r.shown) if r.shown is not None else None,
            "excerpt": r.excerpt,
        })

    return record
