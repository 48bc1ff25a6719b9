"""A simulated prompt cache, so that token accounting of cache reads and writes can be tested.

It follows the documented rules (``claude-interfaces.md`` §4.7) closely enough for a client
to see the difference between a cached and an uncached prefix:

* the prompt renders as ``tools -> system -> messages``, one "block" per tool, system block
  and content block;
* every block carrying ``cache_control`` (at most 4; a top-level ``cache_control`` marks the
  last block) is a breakpoint; the cache key of a breakpoint is a hash of the model and
  every byte before and including it;
* the longest breakpoint prefix already in the cache is read (``cache_read_input_tokens``);
  the part between it and the last breakpoint is written (``cache_creation_input_tokens``);
  the rest is plain ``input_tokens``;
* prefixes shorter than ``min_tokens`` are never cached; entries live ``ttl`` seconds (5 min,
  or 1 h for ``{"ttl": "1h"}``) and each read refreshes them.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    ephemeral_1h: int = 0

    def as_dict(self, output_tokens: int) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.cache_creation_input_tokens - self.ephemeral_1h,
                "ephemeral_1h_input_tokens": self.ephemeral_1h,
            },
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }


def _blocks(body: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
    """(serialised block without cache_control, its cache_control) in render order."""
    out: list[tuple[str, dict[str, Any] | None]] = []

    def add(block: Any) -> None:
        if isinstance(block, dict):
            cc = block.get("cache_control")
            rest = {k: v for k, v in block.items() if k != "cache_control"}
            out.append((json.dumps(rest, sort_keys=True, ensure_ascii=False), cc))
        else:
            out.append((json.dumps(block, ensure_ascii=False), None))

    for tool in body.get("tools") or []:
        add(tool)
    system = body.get("system")
    if isinstance(system, str):
        add({"type": "text", "text": system})
    elif isinstance(system, list):
        for block in system:
            add(block)
    for msg in body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, dict) else None
        role = msg.get("role") if isinstance(msg, dict) else None
        if isinstance(content, str):
            add({"role": role, "type": "text", "text": content})
        elif isinstance(content, list):
            for block in content:
                add({"role": role, **block} if isinstance(block, dict) else block)
    if body.get("cache_control") and out:
        out[-1] = (out[-1][0], body["cache_control"])
    return out


class PromptCache:
    def __init__(self, min_tokens: int = 1024) -> None:
        self.min_tokens = min_tokens
        self._entries: dict[str, float] = {}
        self._lock = threading.Lock()

    def account(self, body: dict[str, Any], *, dry_run: bool = False) -> Usage:
        """Split the request's input tokens into uncached, cache-written and cache-read."""
        blocks = _blocks(body)
        h = hashlib.sha256(str(body.get("model", "")).encode())
        chars = 0
        breakpoints: list[tuple[str, int, float]] = []  # (key, tokens so far, ttl seconds)
        for text, cc in blocks:
            h.update(text.encode())
            chars += len(text)
            if isinstance(cc, dict) and len(breakpoints) < 4:
                ttl = 3600.0 if cc.get("ttl") == "1h" else 300.0
                breakpoints.append((h.hexdigest(), chars // 4, ttl))
        total = max(1, chars // 4)
        now = time.monotonic()
        with self._lock:
            read = 0
            for key, tokens, _ in breakpoints:
                if self._entries.get(key, 0.0) > now:
                    read = tokens
            eligible = [(k, t, ttl) for k, t, ttl in breakpoints if t >= self.min_tokens]
            write = max(0, eligible[-1][1] - read) if eligible else 0
            write_1h = write if eligible and eligible[-1][2] > 300 else 0
            if not dry_run:
                for key, _, ttl in eligible:
                    self._entries[key] = now + ttl
        return Usage(total - read - write, write, read, write_1h)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
