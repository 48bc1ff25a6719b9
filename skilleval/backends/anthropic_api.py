"""The ``anthropic_api`` backend: trigger trials and text completion through the Messages API.

It sends Claude Code's ``Skill`` tool and skill listing in the layout of the CLI version it
mimics (``api_listing``), streams the answer and stops at the first deciding block, retries
with our own backoff (``retry``), adapts its concurrency per model, marks the stable prefix
for prompt caching, and accounts tokens (cache reads and writes included) and cost from the
price table in config. With ``batch=true`` trials go through Message Batches (``api_batch``).

The key is read from the environment (``api_key_env``) at construction and handed to the SDK
only; it is never part of a result, an identity or a log line.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
import time
from pathlib import Path
from typing import Any

import anthropic

try:  # the SDK's HTTP client (anthropic 2.x ships its own fork of httpx)
    import httpx2 as _httpx
except ImportError:  # pragma: no cover
    import httpx as _httpx  # type: ignore[no-redef]

from skilleval.backends.api_listing import LAYOUTS, ORIENT_TOOLS, build_request, layout_for, skill_input_key
from skilleval.backends.api_turns import Turns, add_tokens, skill_name
from skilleval.backends.base import BaseBackend
from skilleval.backends.params import AnthropicApiParams, check_base_url, check_bounds
from skilleval.backends.pricing import TokenCounts, cost_usd, load_table, tokens_from_usage, worst_case_usd
from skilleval.backends.retry import AdaptiveLimiter, Failure, backoff_delay, classify
from skilleval.domain import Completion, Outcome, Trial, TrialResult
from skilleval.errors import HarnessError, UserError
from skilleval.excerpt import block_summary, make_excerpt
from skilleval import sample_key
from skilleval.sim.protocol import SIM_KEY, hint_value, is_loopback, sample_hint



class RetriesExhausted(Exception):
    def __init__(self, failure: Failure, retries: int) -> None:
        super().__init__(failure.message)
        self.failure, self.retries = failure, retries


class AttemptTimeout(Exception):
    """An attempt ran past ``timeout_s``; carries the retries made before it."""

    def __init__(self, retries: int) -> None:
        super().__init__(f"timeout after {retries} retries")
        self.retries = retries


class AnthropicApiBackend(BaseBackend):
    name = "anthropic_api"
    needs_self_check = True
    harness_version = "api-1"
    # functional executions only: 2 installs the skill folder and names it on load_skill
    executor_version = "api-exec-2"

    def __init__(self, params: AnthropicApiParams) -> None:
        check_base_url("backend", params.base_url)
        if params.pricing_file:  # read now: a bad file is exit 2 before any call, not
            load_table(params.pricing_file)  # an error on every trial after its call
        check_bounds("backend", params, {"max_retries": 0, "concurrency": 1, "min_concurrency": 1,
                                         "max_turns": 1, "max_tokens": 1}, positive=("timeout_s",))
        if params.layout not in LAYOUTS:  # an unknown one sent no listing at all: recall 0 %
            raise UserError(f"backend.layout={params.layout!r}: one of {', '.join(LAYOUTS)}")
        unknown = [t for t in params.extra_tools if t not in ORIENT_TOOLS]
        if unknown:  # an unknown tool was dropped without a word
            raise UserError(f"backend.extra_tools: unknown {', '.join(map(repr, unknown))} "
                            f"(valid: {', '.join(ORIENT_TOOLS)})")
        self.params = params
        self.model = params.model
        key = os.environ.get(params.api_key_env)
        if not key:
            if not is_loopback(params.base_url):
                raise UserError(f"backend anthropic_api needs an API key in ${params.api_key_env}")
            key = SIM_KEY
        self.client = anthropic.AsyncAnthropic(api_key=key, base_url=params.base_url,
                                               max_retries=0, timeout=params.timeout_s)
        self.system_prompt = _read(params.system_prompt_file) or params.system_prompt
        self.tool_description = _read(params.skill_tool_description_file)
        self.limiter = AdaptiveLimiter(params.concurrency, params.min_concurrency)
        self.layout = layout_for(params.cli_version, params.model, params.layout)
        self.input_key = skill_input_key(params.cli_version)
        self.hints = params.sim_hints and is_loopback(params.base_url)
        self._batcher: Any = None
        self.state_dir: Path | None = Path(params.batch_state_dir) if params.batch_state_dir else None

    def use_store(self, root: Path) -> None:
        """Batch ids go under the store root unless `backend.batch_state_dir` says otherwise."""
        if not self.params.batch_state_dir:
            self.set_state_dir(root)

    def set_state_dir(self, path: str | Path) -> None:
        """Where batch ids are kept for resume (the runner passes ``<store_root>``)."""
        self.state_dir = Path(path)

    def identity(self) -> dict[str, Any]:
        p = self.params
        ident = super().identity()
        digest = hashlib.sha256(f"{self.system_prompt}|{self.tool_description}".encode()).hexdigest()
        ident.update({"endpoint": p.base_url or "anthropic", "layout": self.layout,
                      "cli_version": p.cli_version, "prompt": digest[:16],
                      "extra_tools": list(p.extra_tools), "max_turns": p.max_turns,
                      "sort_listing": p.sort_listing, "max_tokens": p.max_tokens})
        return ident

    @property
    def version(self) -> str:
        return f"anthropic_api/{self.layout}@cli{self.params.cli_version}/sdk{anthropic.__version__}"

    def request_for(self, trial: Trial) -> dict[str, Any]:
        p = self.params
        return build_request(trial.listing, trial.query, model=p.model, layout=self.layout,
                             cli_version=p.cli_version, system_prompt=self.system_prompt,
                             tool_description=self.tool_description, extra_tools=p.extra_tools,
                             max_tokens=p.max_tokens, cache=p.prompt_cache,
                             sort_listing=p.sort_listing)

    def headers_for(self, trial: Trial) -> dict[str, str]:
        return {"x-skilleval-sim": hint_value(trial.repeat, trial.listing)} if self.hints else {}

    # -- trials -------------------------------------------------------------------------

    async def run_trial(self, trial: Trial) -> TrialResult:
        if self.params.batch:
            from skilleval.backends.api_batch import BatchRunner

            if self._batcher is None:
                self._batcher = BatchRunner(self)
            return await self._batcher.run_trial(trial)
        start = time.perf_counter()
        try:
            turns, retries = await self._with_retries(lambda: self._converse(trial))
        except RetriesExhausted as exc:
            return self.result(trial, Outcome.ERROR, start, exc.retries, Turns(),
                               error=f"{exc.failure.message} (after {exc.retries} retries)")
        except AttemptTimeout as exc:
            return self.result(trial, Outcome.TIMEOUT, start, exc.retries, Turns(),
                               error=f"no decision within {self.params.timeout_s:g} s")
        if not turns.decided:
            # max_turns reached with only non-Skill tool calls: the model chose no skill (yet)
            return self.result(trial, Outcome.NOT_TRIGGERED, start, retries, turns)
        outcome = Outcome.TRIGGERED if turns.fired == trial.target else Outcome.NOT_TRIGGERED
        return self.result(trial, outcome, start, retries, turns)

    def result(self, trial: Trial, outcome: Outcome, start: float, retries: int, turns: Turns,
               *, error: str | None = None, batch: bool = False) -> TrialResult:
        t = turns.tokens
        cost = cost_usd(self.model, t, batch=batch, pricing_file=self.params.pricing_file)
        return TrialResult(
            key=trial.key, outcome=outcome, fired=turns.fired, position=turns.position,
            latency_ms=(time.perf_counter() - start) * 1000, input_tokens=t.total_input,
            output_tokens=t.output_tokens, cache_read_tokens=t.cache_read_tokens,
            cache_write_tokens=t.cache_write_5m_tokens + t.cache_write_1h_tokens,
            cost_usd=cost or 0.0, retries=retries, error=error, backend_version=self.version,
            shown=tuple(sorted(s.name for s in trial.listing)) if self.params.sort_listing
            else tuple(s.name for s in trial.listing), excerpt=make_excerpt(turns.said))

    async def _with_retries(self, attempt_fn: Any) -> tuple[Any, int]:
        p = self.params
        retries = 0
        while True:
            try:
                async with self.limiter:
                    value = await asyncio.wait_for(attempt_fn(), p.timeout_s)
                self.limiter.on_success()
                return value, retries
            except anthropic.APIError as exc:
                failure = classify(exc)
                if failure.rate_limited:
                    self.limiter.on_rate_limit()
                if not failure.retryable or retries >= p.max_retries:
                    raise RetriesExhausted(failure, retries) from exc
                await asyncio.sleep(backoff_delay(retries, failure, p.retry_base_s, p.retry_max_s))
                retries += 1
            except asyncio.TimeoutError:
                raise AttemptTimeout(retries) from None

    async def _converse(self, trial: Trial) -> Turns:
        """Up to ``max_turns`` model turns; a non-Skill tool call gets a stub result."""
        request = self.request_for(trial)
        messages = list(request.pop("messages"))
        turns = Turns()
        for _ in range(max(1, self.params.max_turns)):
            content, usage = await self._stream_turn(request, messages, trial)
            turns.tokens = add_tokens(turns.tokens, tokens_from_usage(usage))
            turns.said.extend(block_summary(b) for b in content[:8])
            calls = [b for b in content if b.get("type") == "tool_use"]
            for block in calls:
                if block.get("name") == "Skill":
                    turns.fired = skill_name(block.get("input") or {})
                    turns.position = turns.tool_calls
                    turns.decided = True
                    return turns
                turns.tool_calls += 1
            if not calls:
                turns.decided = True  # answered in text: the model chose no skill
                return turns
            messages = messages + [
                {"role": "assistant", "content": content},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": b["id"], "is_error": True,
                     "content": "This tool is not available in the evaluation harness."}
                    for b in calls]}]
        return turns

    async def _stream_turn(self, request: dict[str, Any], messages: list[dict[str, Any]],
                           trial: Trial) -> tuple[list[dict[str, Any]], Any]:
        """Stream one turn; stop at the first deciding block. Returns (content, usage)."""
        usage: Any = None
        content: list[dict[str, Any]] = []
        complete = False  # message_stop seen, or we stopped at a deciding block ourselves
        async with self.client.messages.stream(**request, messages=messages,
                                               extra_headers=self.headers_for(trial)) as stream:
            try:
                async for event in stream:
                    if event.type == "message_start":
                        usage = event.message.usage
                    elif event.type == "message_delta" and usage is not None and event.usage:
                        usage.output_tokens = event.usage.output_tokens
                    elif event.type == "message_stop":
                        complete = True
                    elif event.type == "content_block_start":
                        if event.content_block.type == "text" and self.params.stop_on_text:
                            content.append({"type": "text", "text": ""})
                            complete = True
                            break
                    elif event.type == "content_block_stop":
                        block = event.content_block.model_dump(exclude_none=True)
                        block.pop("parsed_output", None)
                        block.pop("caller", None)
                        if block.get("type") in ("tool_use", "text"):
                            content.append({k: v for k, v in block.items()
                                            if k in ("type", "id", "name", "input", "text")})
                        if block.get("type") == "tool_use" and block.get("name") == "Skill":
                            complete = True
                            break
            except _httpx.TransportError as exc:  # the SDK does not wrap errors while reading
                raise anthropic.APIConnectionError(
                    message=f"connection lost mid-stream: {type(exc).__name__}",
                    request=stream.response.request) from exc
            if not complete:  # a cut stream is not an answer: retried, never "not triggered"
                raise anthropic.APIConnectionError(message="stream ended before message_stop",
                                                   request=stream.response.request)
        return content, usage

    async def execute(self, request: Any) -> Any:
        """Run a functional task: see `skilleval.backends.api_executor`."""
        from skilleval.backends.api_executor import execute_via_api

        return await execute_via_api(self, request)

    # -- text -----------------------------------------------------------------------------

    async def complete(self, prompt: str, *, system: str | None = None,
                       max_tokens: int = 2048) -> Completion:
        start = time.perf_counter()
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens,
                                  "messages": [{"role": "user", "content": prompt}]}
        if system:
            kwargs["system"] = system
        key = sample_key.current()
        if self.hints and key is not None:  # a loopback simulator only (see sample_key)
            kwargs["extra_headers"] = {"x-skilleval-sim": sample_hint(key)}
        try:
            message, _ = await self._with_retries(lambda: self.client.messages.create(**kwargs))
        except RetriesExhausted as exc:
            raise HarnessError(f"completion failed: {exc.failure.message} "
                               f"(after {exc.retries} retries)") from None
        except AttemptTimeout as exc:
            raise HarnessError(f"completion gave no answer within {self.params.timeout_s:g} s "
                               f"(after {exc.retries} retries)") from None
        text = "".join(getattr(b, "text", "") for b in message.content)
        t = tokens_from_usage(message.usage)
        cost = cost_usd(self.model, t, pricing_file=self.params.pricing_file) or 0.0
        return Completion(text, t.total_input, t.output_tokens, cost,
                          (time.perf_counter() - start) * 1000)

    def estimate_cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        return cost_usd(self.model, TokenCounts(input_tokens, output_tokens),
                        batch=self.params.batch, pricing_file=self.params.pricing_file)

    def worst_cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        return worst_case_usd(self.model, input_tokens, output_tokens, batch=self.params.batch,
                              pricing_file=self.params.pricing_file)

    async def aclose(self) -> None:
        if self._batcher is not None:
            await self._batcher.aclose()
        await self.client.close()


def _read(path: str | None) -> str:
    if not path:
        return ""
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
