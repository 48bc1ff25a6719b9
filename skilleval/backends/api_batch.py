"""``backend.batch=true``: trigger trials through Message Batches (50 % price, no streaming).

Trials arriving within ``batch_window_s`` (or up to ``batch_max_requests``) go into one batch.
Its id and custom ids are written to ``<state_dir>/batches/<batch_id>.json`` *before* polling
starts, so after a crash a new run finds the file and waits for that batch instead of paying
again; the file is removed once its results are read. Errored, expired and canceled entries
are retried in a later batch and counted in ``retries``; a request that keeps failing becomes
an ``error`` outcome, never "not triggered".

The runner must let many trials be in flight at once for batching to pay off (a runner
concurrency of 16 makes batches of at most 16).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilleval.backends.api_turns import Turns, skill_name
from skilleval.backends.pricing import tokens_from_usage
from skilleval.domain import Outcome, Trial, TrialResult
from skilleval.excerpt import block_summary

if TYPE_CHECKING:
    from skilleval.backends.anthropic_api import AnthropicApiBackend

_RETRYABLE = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}


def custom_id(trial: Trial) -> str:
    return "t" + hashlib.sha256(trial.key.encode()).hexdigest()[:40]


class BatchRunner:
    def __init__(self, backend: "AnthropicApiBackend") -> None:
        self.backend = backend
        self._queue: list[tuple[Trial, asyncio.Future[dict[str, Any]]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._polls: dict[str, asyncio.Task[dict[str, dict[str, Any]]]] = {}
        self._resumable: dict[str, str] = {}  # custom_id -> batch id from an earlier process
        for path in self._dir().glob("*.json") if self._dir().exists() else []:
            state = json.loads(path.read_text())
            for cid in state.get("custom_ids", []):
                self._resumable[cid] = state["batch_id"]

    def _dir(self) -> Path:
        return (self.backend.state_dir or Path(".skilleval")) / "batches"

    async def run_trial(self, trial: Trial) -> TrialResult:
        start = time.perf_counter()
        retries = 0
        while True:
            cid = custom_id(trial)
            batch_id = self._resumable.pop(cid, None)
            if batch_id is not None:
                try:
                    result = (await self._poll(batch_id)).get(cid, {"type": "expired"})
                except Exception as exc:  # noqa: BLE001 - gone, expired or unreachable batch
                    # Give the saved id up (or every later run fails the same way) and
                    # submit the trial again.
                    (self._dir() / f"{batch_id}.json").unlink(missing_ok=True)
                    result = {"type": "errored", "error": {"type": "api_error",
                                                           "message": str(exc)[:200]}}
            else:
                future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
                self._queue.append((trial, future))
                if len(self._queue) >= self.backend.params.batch_max_requests:
                    await self._flush()
                elif self._flusher is None or self._flusher.done():
                    self._flusher = asyncio.create_task(self._flush_later())
                result = await future
            kind = result.get("type")
            if kind == "succeeded":
                message = result["message"]
                turns = Turns(tokens=tokens_from_usage(message.get("usage")), decided=True,
                              said=[block_summary(b) for b in message.get("content", [])[:8]])
                calls = [b for b in message.get("content", []) if b.get("type") == "tool_use"]
                for i, block in enumerate(calls):
                    if block.get("name") == "Skill":
                        turns.fired, turns.position = skill_name(block.get("input") or {}), i
                        break
                outcome = Outcome.TRIGGERED if turns.fired == trial.target else Outcome.NOT_TRIGGERED
                return self.backend.result(trial, outcome, start, retries, turns, batch=True)
            error = (result.get("error") or {})
            error = error.get("error", error) if isinstance(error, dict) else {}
            retryable = kind in ("expired", "canceled") or error.get("type") in _RETRYABLE
            if not retryable or retries >= self.backend.params.max_retries:
                return self.backend.result(trial, Outcome.ERROR, start, retries, Turns(),
                                           error=f"batch {kind}: {error.get('type', '')} "
                                                 f"(after {retries} retries)".strip(), batch=True)
            retries += 1

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.backend.params.batch_window_s)
        await self._flush()

    async def _flush(self) -> None:
        queue, self._queue = self._queue, []
        if not queue:
            return
        by_id: dict[str, list[asyncio.Future[dict[str, Any]]]] = {}
        trials: dict[str, Trial] = {}
        for trial, future in queue:
            by_id.setdefault(custom_id(trial), []).append(future)
            trials[custom_id(trial)] = trial
        try:
            batch_id = await self._create(list(trials.values()))
            results = await self._poll(batch_id)
        except Exception as exc:  # noqa: BLE001 - every waiting trial must get an answer
            results = {cid: {"type": "errored", "error": {"type": "api_error",
                                                          "message": str(exc)[:200]}}
                       for cid in by_id}
        for cid, futures in by_id.items():
            for future in futures:
                if not future.done():
                    future.set_result(results.get(cid, {"type": "expired"}))

    async def _create(self, trials: list[Trial]) -> str:
        b = self.backend
        requests = []
        for trial in trials:
            params = b.request_for(trial)
            if b.hints:
                from skilleval.sim.protocol import hint_value

                params["metadata"] = {"user_id": "skilleval-sim:" + hint_value(trial.repeat, trial.listing)}
            requests.append({"custom_id": custom_id(trial), "params": params})
        batch, _ = await b._with_retries(lambda: b.client.messages.batches.create(requests=requests))
        folder = self._dir()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{batch.id}.json").write_text(json.dumps(
            {"batch_id": batch.id, "model": b.model, "custom_ids": [r["custom_id"] for r in requests]}))
        return batch.id

    async def submit_only(self, trials: list[Trial]) -> str:
        """Create a batch and record it, without waiting (what a crashed run leaves behind)."""
        return await self._create(trials)

    def _poll(self, batch_id: str) -> "asyncio.Task[dict[str, dict[str, Any]]]":
        if batch_id not in self._polls:
            self._polls[batch_id] = asyncio.ensure_future(self._poll_until_ended(batch_id))
        return self._polls[batch_id]

    async def _poll_until_ended(self, batch_id: str) -> dict[str, dict[str, Any]]:
        b = self.backend
        while True:
            batch, _ = await b._with_retries(lambda: b.client.messages.batches.retrieve(batch_id))
            if batch.processing_status == "ended":
                break
            await asyncio.sleep(b.params.batch_poll_s)
        decoder, _ = await b._with_retries(lambda: b.client.messages.batches.results(batch_id))
        results: dict[str, dict[str, Any]] = {}
        async for item in decoder:
            results[item.custom_id] = item.result.model_dump(exclude_none=True)
        (self._dir() / f"{batch_id}.json").unlink(missing_ok=True)
        return results

    async def aclose(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            await self._flusher
