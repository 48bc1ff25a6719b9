"""Reading a Messages API request the way the simulated model needs to: where is the skill
listing, what is the user's query, and where in the conversation are we?

Claude Code has moved its skill listing three times (see ``claude-interfaces.md`` §1.2, §2.3):

* up to 2.0.x: XML ``<available_skills>`` inside the ``Skill`` tool's description;
* 2.1.1: ``Available skills:`` lines inside the ``Skill`` tool's description;
* 2.1.197+: a ``<system-reminder>`` text block in the first user message, or (Claude 5.5
  models) a mid-conversation ``{"role": "system"}`` message after the query.

The simulator looks in all of those places, so the same verdict comes out whichever layout
a client (the real CLI, our API backend, a user's own harness) sends.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from skilleval.domain import ListedSkill

_XML_SKILL = re.compile(r"<name>\s*(.*?)\s*</name>\s*<description>\s*(.*?)\s*</description>", re.S)
_LINE_HEADERS = (
    "The following skills are available for use with the Skill tool:",
    "Available skills:",
)
_ENTRY = re.compile(r"^- ([A-Za-z0-9_.:\-]+)(?: \([^)]*\))?: ?(.*)$")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
HINT_HEADER = "x-skilleval-sim"
"""Optional request header (JSON ``{"repeat": int, "order": [names]}``) sent by skilleval's
own backends to a loopback simulator: the repeat index of the trial and the order in which
the trial listed its skills. The verdict is still computed from the listing found in the
request; the hint only lets the draw use the same seed as the ``stub`` backend."""


@dataclass
class Conversation:
    """What the simulator needs to know about one request."""

    model: str
    listing: tuple[ListedSkill, ...] = ()
    query: str | None = None
    tool_names: tuple[str, ...] = ()
    skill_input_key: str = "skill"
    # ids of earlier tool_use blocks by tool name, and the tool_result ids of the last user turn
    tool_uses: dict[str, str] = field(default_factory=dict)
    last_results: tuple[str, ...] = ()
    last_user_text: str = ""
    system_text: str = ""
    cwd: str | None = None

    @property
    def has_skill_tool(self) -> bool:
        return "Skill" in self.tool_names

    @property
    def skill_already_called(self) -> bool:
        return "Skill" in self.tool_uses.values()

    @property
    def answering_orientation(self) -> bool:
        """The last user turn answers a non-Skill tool call (an orientation step)."""
        return bool(self.last_results) and all(
            self.tool_uses.get(i) not in (None, "Skill") for i in self.last_results)


def _texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                yield str(block.get("text", ""))


def parse_listing(text: str) -> tuple[ListedSkill, ...] | None:
    """The skills listed in one text, or None when it holds no listing."""
    if "<available_skills>" in text:
        found = _XML_SKILL.findall(text.split("<available_skills>", 1)[1])
        return tuple(ListedSkill(n, _strip_scope(d)) for n, d in found)
    for header in _LINE_HEADERS:
        if header in text:
            body = text.split(header, 1)[1].split("</system-reminder>", 1)[0]
            return _parse_lines(body)
    return None


def _parse_lines(body: str) -> tuple[ListedSkill, ...]:
    entries: list[list[str]] = []
    for line in body.split("\n"):
        m = _ENTRY.match(line)
        if m:
            entries.append([m.group(1), m.group(2)])
        elif entries and not line.strip():
            break  # a blank line ends the listing (the CLI puts other text after it)
        elif entries:
            entries[-1][1] += "\n" + line  # a description that spans lines
    return tuple(ListedSkill(n, d.rstrip()) for n, d in entries)


def _strip_scope(desc: str) -> str:
    return re.sub(r"\s*\((project|user|plugin)\)$", "", desc)


def _strip_reminders(text: str) -> str:
    return _REMINDER.sub("", text).strip()


def parse_request(body: dict[str, Any]) -> Conversation:
    """Extract model, listing, query and turn state from a /v1/messages body."""
    conv = Conversation(model=str(body.get("model", "")))
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    conv.tool_names = tuple(str(t.get("name")) for t in tools)
    candidates: list[str] = []
    for tool in tools:
        if tool.get("name") == "Skill":
            candidates.append(str(tool.get("description", "")))
            props = (tool.get("input_schema") or {}).get("properties") or {}
            if "skill" not in props and "command" in props:
                conv.skill_input_key = "command"
    system = body.get("system")
    conv.system_text = "\n".join(_texts(system)) if system else ""
    candidates.append(conv.system_text)
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    first_user = next((m for m in messages if m.get("role") == "user"), None)
    for msg in messages:
        candidates.extend(_texts(msg.get("content")))
        content = msg.get("content")
        if msg.get("role") == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    conv.tool_uses[str(block.get("id"))] = str(block.get("name"))
    for text in candidates:
        listing = parse_listing(text)
        if listing is not None:
            conv.listing = listing
            break
    if first_user is not None:
        parts = [_strip_reminders(t) for t in _texts(first_user.get("content"))]
        parts = [p for p in parts if p]
        conv.query = parts[-1] if parts else None
    users = [m for m in messages if m.get("role") == "user"]
    if users:
        last = users[-1].get("content")
        if isinstance(last, list):
            conv.last_results = tuple(
                str(b.get("tool_use_id")) for b in last
                if isinstance(b, dict) and b.get("type") == "tool_result")
        conv.last_user_text = "\n".join(_texts(last))
    m = re.search(r"(?:Primary working directory|Working directory|cwd): *(/\S+)",
                  "\n".join(candidates))
    conv.cwd = m.group(1) if m else None
    return conv


def parse_hint(raw: str | None) -> tuple[int | None, list[str] | None]:
    """(repeat, order) from the hint header; (None, None) when absent or malformed."""
    if not raw:
        return None, None
    try:
        hint = json.loads(raw)
        repeat = hint.get("repeat")
        order = hint.get("order")
        return (int(repeat) if repeat is not None else None,
                [str(n) for n in order] if isinstance(order, list) else None)
    except (ValueError, TypeError, AttributeError):
        return None, None


def apply_order(listing: tuple[ListedSkill, ...], order: list[str] | None) -> tuple[ListedSkill, ...]:
    """Re-order a parsed listing to the trial's order; extra skills keep their place at the end.

    Clients such as the CLI sort skills by name, while a trial lists them in its own order;
    the seeded draw depends on order, so the hint restores it. Skills the request shows that
    the trial did not list (an isolation leak) still count, and change the verdict."""
    if not order:
        return listing
    rank = {name: i for i, name in enumerate(order)}
    return tuple(sorted(listing, key=lambda s: (rank.get(s.name, len(rank)),)))


def estimate_tokens(obj: Any) -> int:
    """A deterministic token estimate: ~4 characters per token of the JSON rendering."""
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, sort_keys=True)
    return max(1, len(text) // 4)


def hint_value(repeat: int, listing: "tuple[ListedSkill, ...] | list[ListedSkill]") -> str:
    """The ``x-skilleval-sim`` header value our backends send to a loopback simulator."""
    return json.dumps({"repeat": repeat, "order": [s.name for s in listing]}, separators=(",", ":"))


def sample_hint(key: str) -> str:
    """The ``x-skilleval-sim`` header value for a completion the caller has keyed (see
    ``skilleval.sample_key``): the simulator answers it from (prompt, key), not its counter."""
    return json.dumps({"sample": key}, separators=(",", ":"), ensure_ascii=True)


def parse_sample(raw: str | None) -> str | None:
    """The caller's sample key from the hint header; None when absent or malformed."""
    if not raw:
        return None
    try:
        key = json.loads(raw).get("sample")
    except (ValueError, AttributeError):
        return None
    return key if isinstance(key, str) else None


#: The API key our backends send to a loopback simulator when none is set (a placeholder the
#: simulator ignores; never sent anywhere else).
SIM_KEY = "sk-ant-sim-not-a-key"


def is_loopback(base_url: str | None) -> bool:
    """True for http(s)://127.0.0.1 / localhost / [::1] URLs: only these get sim hints."""
    if not base_url:
        return False
    from urllib.parse import urlsplit

    return (urlsplit(base_url).hostname or "") in ("127.0.0.1", "localhost", "::1")
