"""A short, secret-free excerpt of what the model did in one trial, for the viewer.

Why: a person looking at a failed query wants to see *what the model did* (its first words,
or the tool it called) without the store keeping whole transcripts. Every backend builds its
excerpt through `make_excerpt`, which

* keeps at most ``MAX_CHARS`` characters (whitespace folded, control characters removed),
* redacts every secret it can recognise: the values of the key/token environment variables
  and anything shaped like an Anthropic/OpenAI key or a bearer token, *before* truncating, so
  a key cut in half at the boundary cannot leak its first part.

The excerpt is data, never markup: the viewer shows it as text.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Iterable

MAX_CHARS = 200
# Collect a little more than we keep, so the redaction sees whole keys.
_COLLECT = 4 * MAX_CHARS

SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
              "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN")
_PATTERNS = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{4,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)\b(bearer|authorization|x-api-key)\s*[:=]?\s*[A-Za-z0-9._\-]{8,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def redact(text: str) -> str:
    """`text` with known secrets replaced by ``[redacted]``."""
    for name in SECRET_ENV:
        value = os.environ.get(name)
        if value and len(value) >= 8:
            text = text.replace(value, "[redacted]")
    for pat in _PATTERNS:
        text = pat.sub("[redacted]", text)
    return text


def make_excerpt(parts: Iterable[str]) -> str | None:
    """One bounded line from `parts` (text snippets and tool-call summaries), or None."""
    pieces: list[str] = []
    size = 0
    for part in parts:
        if not part:
            continue
        pieces.append(part)
        size += len(part)
        if size >= _COLLECT:
            break
    if not pieces:
        return None
    text = " ".join(" | ".join(pieces)[:_COLLECT].split())
    text = redact(_CONTROL.sub(" ", text)).strip()
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS - 1].rstrip() + "…"
    return text or None


def block_summary(block: Any) -> str:
    """A Messages API / stream-json content block as one short string."""
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "tool_use":
        try:
            args = json.dumps(block.get("input") or {}, ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError):
            args = "{…}"
        return f"→ {block.get('name')}({args[:120]})"
    return ""


def excerpt_of_blocks(blocks: Iterable[Any]) -> str | None:
    return make_excerpt(block_summary(b) for b in blocks)
