"""Message Batches for the simulated API: create, retrieve, list, cancel, results (JSONL).

A batch is processed in a background thread through the same answer pipeline as
``/v1/messages`` (faults included: a faulted request becomes an ``errored`` result), then it
stays ``in_progress`` for ``batch_delay_ms`` so clients exercise their polling loop.
Batches live in memory only: a client that crashed resumes by id while this process runs.
"""
from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

MessageFn = Callable[[dict[str, Any]], "tuple[int, dict[str, Any]]"]
"""(params) -> (status, message or error body); the server's non-streaming pipeline."""


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _iso(t: datetime | None) -> str | None:
    return t.isoformat().replace("+00:00", "Z") if t else None


@dataclass
class Batch:
    id: str
    requests: list[dict[str, Any]]
    created_at: datetime = field(default_factory=_now)
    ended_at: datetime | None = None
    cancel_initiated_at: datetime | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    status: str = "in_progress"

    def counts(self) -> dict[str, int]:
        kinds = [r["result"]["type"] for r in self.results]
        processing = len(self.requests) - len(kinds) if self.status != "ended" else 0
        return {"processing": processing, "succeeded": kinds.count("succeeded"),
                "errored": kinds.count("errored"), "canceled": kinds.count("canceled"),
                "expired": kinds.count("expired")}

    def as_json(self, base_url: str) -> dict[str, Any]:
        return {
            "id": self.id, "type": "message_batch", "processing_status": self.status,
            "request_counts": self.counts(), "created_at": _iso(self.created_at),
            "expires_at": _iso(self.created_at + timedelta(hours=24)),
            "ended_at": _iso(self.ended_at), "archived_at": None,
            "cancel_initiated_at": _iso(self.cancel_initiated_at),
            "results_url": (f"{base_url}/v1/messages/batches/{self.id}/results"
                            if self.status == "ended" else None),
        }


class Batches:
    def __init__(self, message_fn: MessageFn, delay_s: Callable[[], float]) -> None:
        self._message_fn = message_fn
        self._delay_s = delay_s
        self._batches: dict[str, Batch] = {}
        self._lock = threading.Lock()

    def create(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | Batch]:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return 400, _error("invalid_request_error", "requests: must be a non-empty list")
        ids = [r.get("custom_id") for r in requests if isinstance(r, dict)]
        if len(ids) != len(requests) or len(set(ids)) != len(ids) or not all(ids):
            return 400, _error("invalid_request_error", "custom_id values must be unique strings")
        batch = Batch("msgbatch_" + uuid.uuid4().hex[:24], requests)
        with self._lock:
            self._batches[batch.id] = batch
        threading.Thread(target=self._process, args=(batch,), daemon=True).start()
        return 200, batch

    def _process(self, batch: Batch) -> None:
        start = time.monotonic()
        for req in batch.requests:
            if batch.cancel_initiated_at:
                batch.results.append({"custom_id": req["custom_id"], "result": {"type": "canceled"}})
                continue
            params = dict(req.get("params") or {})
            params.pop("stream", None)
            status, payload = self._message_fn(params)
            result = ({"type": "succeeded", "message": payload} if status == 200
                      else {"type": "errored", "error": payload})
            batch.results.append({"custom_id": req["custom_id"], "result": result})
        time.sleep(max(0.0, self._delay_s() - (time.monotonic() - start)))
        batch.ended_at = _now()
        batch.status = "ended"

    def get(self, batch_id: str) -> Batch | None:
        with self._lock:
            return self._batches.get(batch_id)

    def cancel(self, batch_id: str) -> Batch | None:
        batch = self.get(batch_id)
        if batch and batch.status == "in_progress":
            batch.cancel_initiated_at = _now()
            batch.status = "canceling"
        return batch

    def list(self, limit: int, after_id: str | None) -> tuple[list[Batch], bool]:
        with self._lock:
            items = sorted(self._batches.values(), key=lambda b: b.created_at, reverse=True)
        if after_id:
            ids = [b.id for b in items]
            items = items[ids.index(after_id) + 1:] if after_id in ids else []
        return items[:limit], len(items) > limit

    @staticmethod
    def results_jsonl(batch: Batch) -> bytes:
        return b"".join(json.dumps(r).encode() + b"\n" for r in batch.results)


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message},
            "request_id": "req_sim" + uuid.uuid4().hex[:16]}
