"""Parser of ``claude -p --output-format stream-json --verbose`` output (claude-interfaces.md §3).

Rules, from what the real CLI prints (2.0.75 - 2.1.332):

* ``system/init`` gives ``claude_code_version`` and ``skills`` (what was loaded; *not* exactly
  the model's listing, but a skill missing here was certainly not shown).
* A trigger is a ``tool_use`` block named ``Skill`` in an ``assistant`` line of the main
  conversation (``parent_tool_use_id`` null), with ``input.skill`` (or ``input.command`` on
  2.0.30, or a ``SlashCommand`` ``/name args``) compared *exactly*, never as a substring
  (``pdf`` is not ``pdf-form-filler``). Any turn counts; ``position`` is the index of that call
  among all the model's tool calls, so "fired after an orientation Read" is position 1.
  ``assistant`` lines carry the complete ``input`` and arrive before ``content_block_stop``.
* ``result`` ends the run. Test ``is_error``, never ``subtype``: an API failure is
  ``subtype:"success", is_error:true, api_error_status:529``. ``error_max_turns`` only means
  the model did not call Skill within the turn limit.
* Lines that are not JSON objects are counted, not fatal; unknown line types are skipped.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from skilleval.excerpt import block_summary
from skilleval.backends.pricing import TokenCounts, cost_usd, tokens_from_usage


@dataclass
class CliRun:
    version: str | None = None
    shown: tuple[str, ...] | None = None
    api_key_source: str | None = None
    fired: str | None = None
    position: int | None = None
    tool_calls: list[str] = field(default_factory=list)
    api_retries: int = 0
    stream_retries: int = 0  # streams that broke mid-way (the CLI retries them silently)
    malformed: int = 0
    result: dict[str, Any] | None = None
    #: First text and tool calls of the main conversation (bounded; see `excerpt`).
    said: list[str] = field(default_factory=list)
    _usage_by_message: dict[str, Any] = field(default_factory=dict)
    _seen_tool_ids: set[str] = field(default_factory=set)
    _open_stream: bool = False
    _stream_delta: bool = False
    #: monotonic times of the ``init`` event (the request follows it) and of the first event
    #: of the main conversation's answer: the API wait between them sizes the process cap
    init_at: float | None = None
    answer_at: float | None = None

    @property
    def api_wait_s(self) -> float | None:
        if self.init_at is None or self.answer_at is None:
            return None
        return max(0.0, self.answer_at - self.init_at)

    @property
    def decided(self) -> bool:
        """A Skill call was seen: nothing later can change the verdict."""
        return self.fired is not None

    @property
    def finished(self) -> bool:
        return self.result is not None

    def feed(self, raw: bytes | str) -> None:
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        line = line.strip()
        if not line:
            return
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            self.malformed += 1
            return
        if not isinstance(event, dict):
            self.malformed += 1
            return
        kind = event.get("type")
        if (self.answer_at is None and self.init_at is not None
                and kind in ("assistant", "stream_event") and event.get("parent_tool_use_id") is None):
            self.answer_at = time.monotonic()
        if kind == "system":
            self._system(event)
        elif kind == "assistant" and event.get("parent_tool_use_id") is None:
            self._assistant(event.get("message") or {})
        elif kind == "stream_event" and event.get("parent_tool_use_id") is None:
            inner = event.get("event") or {}
            self._stream(inner.get("type"))
            if inner.get("type") == "message_start":
                msg = inner.get("message") or {}
                self._usage_by_message[str(msg.get("id"))] = msg.get("usage")
        elif kind == "result" or ("terminal_reason" in event and "is_error" in event):
            self.result = event

    def _stream(self, kind: Any) -> None:
        """Count broken streams. A stream that errors or drops mid-way shows up as a
        ``message_start`` closed by a ``message_stop`` with no ``message_delta`` (which every
        complete message carries), or as a second ``message_start`` while one is open; the
        CLI then retries without an ``api_retry`` line (seen on 2.1.332 against serve-sim)."""
        if kind == "message_start":
            if self._open_stream:
                self.stream_retries += 1
            self._open_stream, self._stream_delta = True, False
        elif kind == "message_delta":
            self._stream_delta = True
        elif kind == "message_stop":
            if self._open_stream and not self._stream_delta:
                self.stream_retries += 1
            self._open_stream = False

    @property
    def retries(self) -> int:
        """Every retry the CLI made: announced (``api_retry``) and silent (broken streams)."""
        return self.api_retries + self.stream_retries

    def _system(self, event: dict[str, Any]) -> None:
        subtype = event.get("subtype")
        if subtype == "init":
            if self.init_at is None:
                self.init_at = time.monotonic()
            self.version = event.get("claude_code_version") or self.version
            skills = event.get("skills")
            if isinstance(skills, list):
                self.shown = tuple(str(s) for s in skills)
            self.api_key_source = event.get("apiKeySource")
        elif subtype == "api_retry":
            self.api_retries += 1

    def _assistant(self, message: dict[str, Any]) -> None:
        msg_id = str(message.get("id"))
        if msg_id not in self._usage_by_message and message.get("usage"):
            self._usage_by_message[msg_id] = message.get("usage")
        for block in message.get("content") or []:
            if len(self.said) < 8 and isinstance(block, dict) and block.get("type") == "text":
                self.said.append(block_summary(block))
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            if len(self.said) < 8:
                self.said.append(block_summary(block))
            tool_id = str(block.get("id"))
            if tool_id in self._seen_tool_ids:
                continue
            self._seen_tool_ids.add(tool_id)
            name = str(block.get("name"))
            if self.fired is None:
                skill = skill_called(name, block.get("input") or {})
                if skill is not None:
                    self.fired, self.position = skill, len(self.tool_calls)
            self.tool_calls.append(name)

    # -- summaries ----------------------------------------------------------------------

    @property
    def is_error(self) -> bool:
        return bool(self.result and self.result.get("is_error"))

    @property
    def api_error_status(self) -> int | None:
        if not self.result:
            return None
        status = self.result.get("api_error_status")
        if status is None and self.result.get("terminal_reason") == "api_error":
            return 0
        return int(status) if status is not None else None

    @property
    def max_turns_reached(self) -> bool:
        return bool(self.result) and (self.result.get("subtype") == "error_max_turns"
                                      or self.result.get("terminal_reason") == "max_turns")

    def error_text(self) -> str:
        if not self.result:
            return ""
        errors = self.result.get("errors") or []
        text = "; ".join(str(e) for e in errors) or str(self.result.get("result") or "")
        return f"{self.result.get('subtype')}: {text[:300]}".strip()

    def tokens(self) -> TokenCounts:
        """Tokens of the whole run from ``result.usage``, else summed per API message."""
        if self.result and self.result.get("usage"):
            return tokens_from_usage(self.result["usage"])
        total = TokenCounts()
        for usage in self._usage_by_message.values():
            t = tokens_from_usage(usage)
            total = TokenCounts(total.input_tokens + t.input_tokens,
                                total.output_tokens + t.output_tokens,
                                total.cache_read_tokens + t.cache_read_tokens,
                                total.cache_write_5m_tokens + t.cache_write_5m_tokens,
                                total.cache_write_1h_tokens + t.cache_write_1h_tokens)
        return total

    def cost_usd(self) -> float | None:
        if self.result and isinstance(self.result.get("total_cost_usd"), (int, float)):
            return float(self.result["total_cost_usd"])
        return None

    def priced(self, model: str, pricing_file: str | None = None) -> tuple[TokenCounts, float]:
        """(tokens, cost) of the run, one price for every CLI call, trial or task: the table's
        price of its tokens; the CLI's own total only for a model the table lacks. A run stopped
        at its decision (or killed at a timeout) has no total, and the CLI prices a model it
        does not know by its own table (sim-1: 4 times ours), so its total is no common unit
        and no budget bound (``worst_cost_usd``) would hold for it."""
        tokens = self.tokens()
        cost = cost_usd(model, tokens, pricing_file=pricing_file)
        return tokens, cost if cost is not None else (self.cost_usd() or 0.0)


def reported_api_wait_s(result: dict[str, Any] | None) -> float | None:
    """Seconds the CLI's own ``result`` event says the run spent on API calls
    (``duration_api_ms``; None when absent). A finished multi-turn run (a functional task, a
    completion) reports its waiting here; the process cap (`cli_gate`) learns from it."""
    value = (result or {}).get("duration_api_ms")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return value / 1000.0


def skill_called(tool: str, inputs: dict[str, Any]) -> str | None:
    """The skill a tool call invokes, or None: ``Skill{skill}``, ``Skill{command}``,
    ``SlashCommand{command: "/name args"}``."""
    if tool not in ("Skill", "SlashCommand"):
        return None
    raw = inputs.get("skill") if tool == "Skill" else None
    if not isinstance(raw, str) or not raw.strip():
        raw = inputs.get("command")
    if not isinstance(raw, str) or not raw.strip():
        return None
    return raw.strip().lstrip("/").split()[0]
