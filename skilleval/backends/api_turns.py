"""What one API trial's conversation produced, and how a Skill tool call names its skill.

Shared by the per-request path (`anthropic_api`) and the Message Batches path (`api_batch`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skilleval.backends.pricing import TokenCounts


@dataclass
class Turns:
    """What one trial's conversation produced."""

    fired: str | None = None
    position: int | None = None
    tool_calls: int = 0
    tokens: TokenCounts = field(default_factory=TokenCounts)
    decided: bool = False
    said: list[str] = field(default_factory=list)  # text and tool calls, for the excerpt


def add_tokens(a: TokenCounts, b: TokenCounts) -> TokenCounts:
    return TokenCounts(a.input_tokens + b.input_tokens, a.output_tokens + b.output_tokens,
                       a.cache_read_tokens + b.cache_read_tokens,
                       a.cache_write_5m_tokens + b.cache_write_5m_tokens,
                       a.cache_write_1h_tokens + b.cache_write_1h_tokens)


def skill_name(inputs: dict[str, Any]) -> str | None:
    """``{"skill": x}`` (2.0.75+) or ``{"command": "/x args"}`` (2.0.30) -> ``x``."""
    raw = inputs.get("skill") or inputs.get("command")
    if not isinstance(raw, str):
        return None
    return raw.strip().lstrip("/").split()[0] if raw.strip() else None
