"""The request the ``anthropic_api`` backend sends: Claude Code's ``Skill`` tool and skill
listing, laid out the way a given CLI version lays them out (``claude-interfaces.md`` §1.2,
§2.3; "Level B" of §4.2: Skill tool plus a short system prompt).

Layouts:

* ``tool_xml``   (CLI 2.0.x): ``<available_skills>`` XML inside the Skill tool description;
* ``tool_lines`` (CLI 2.1.1 - 2.1.196): ``Available skills:`` lines in the description;
* ``reminder``   (CLI 2.1.197+): a ``<system-reminder>`` block in the first user message,
  before the query;
* ``system_message`` (CLI 2.1.197+ with Claude 5.5 models): a mid-conversation
  ``{"role": "system"}`` message after the query.

Caching: the last system block carries ``cache_control`` (caches tools + system); in the
``reminder`` layout the listing block carries one too, so all queries of one candidate
description share the cached prefix. The query always comes after the listing.

The Skill tool's description below is our own wording of its role. Anthropic's exact text
(about 1.4k characters in 2.1.332) can be supplied with ``skill_tool_description_file``
after recording it from the CLI through serve-sim; it is not copied into this repository.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from skilleval.domain import ListedSkill

DEFAULT_SYSTEM = (
    "You are an agent that helps users with software engineering and everyday tasks in their "
    "project. Use the tools available to you. When a task matches one of the available skills, "
    "invoke that skill with the Skill tool before doing anything else."
)
SKILL_TOOL_DESCRIPTION = (
    "Invoke a skill.\n\nA skill is a packaged set of instructions, scripts and resources for a "
    "kind of task. Available skills appear in a listing with one-line descriptions. When the "
    "task at hand is one a listed skill covers, call this tool first, before any other tool.\n\n"
    "- `skill`: exact name from the listing, no leading slash.\n"
    "- `args`: optional arguments to pass through.\n\nDo not invoke a skill that is not listed."
)
LISTING_HEADER = "The following skills are available for use with the Skill tool:"
MAX_DESC_CHARS = 1536
ORIENT_TOOLS: dict[str, dict[str, Any]] = {
    "Read": {"name": "Read", "description": "Read a file from the local filesystem.",
             "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}},
                              "required": ["file_path"]}},
    "Glob": {"name": "Glob", "description": "Find files by glob pattern.",
             "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}},
                              "required": ["pattern"]}},
    "Bash": {"name": "Bash", "description": "Run a shell command.",
             "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                              "required": ["command"]}},
}
EPHEMERAL = {"type": "ephemeral"}


#: how the listing can be laid out in a request (``auto``: as the mimicked CLI version does)
LAYOUTS = ("auto", "reminder", "system_message", "tool_lines", "tool_xml")


def layout_for(cli_version: str, model: str, layout: str) -> str:
    """Resolve ``layout=auto`` from the CLI version being mimicked and the model."""
    if layout != "auto":
        return layout
    parts = tuple(int(p) for p in re.findall(r"\d+", cli_version)[:3]) or (2, 1, 332)
    if parts < (2, 1, 0):
        return "tool_xml"
    if parts < (2, 1, 197):
        return "tool_lines"
    if re.search(r"-5-5\b", model) or model in ("sonnet", "opus", "haiku"):
        return "system_message"
    return "reminder"


def skill_input_key(cli_version: str) -> str:
    """2.0.30 and older called the Skill tool with ``{"command": name}``."""
    parts = tuple(int(p) for p in re.findall(r"\d+", cli_version)[:3]) or (2, 1, 332)
    return "command" if parts < (2, 0, 75) else "skill"


_NEWLINES = re.compile(r"\s*\n\s*")


def shown_description(text: str) -> str:
    """A description as the listing shows it: on one line, at most `MAX_DESC_CHARS`.

    The real CLI (2.1.332, recorded through serve-sim) lists a YAML block description on one
    line: each run of line breaks becomes one space, other spacing is kept. We lay it out the
    same way, because a blank line or a line such as ``- note: ...`` kept inside the listing
    reads as its end, or as another skill, to anyone parsing it (a model, serve-sim). The
    ``stub`` decides on this same text, so stub, API backend and CLI agree trial by trial."""
    text = _NEWLINES.sub(" ", text)
    return text if len(text) <= MAX_DESC_CHARS else text[: MAX_DESC_CHARS - 1] + "…"


def shown_listing(listing: Sequence[ListedSkill]) -> tuple[ListedSkill, ...]:
    """`listing` with every description as the listing shows it (same order)."""
    return tuple(s if s.description == (d := shown_description(s.description))
                 else ListedSkill(s.name, d) for s in listing)


_desc = shown_description


def listing_lines(listing: Sequence[ListedSkill]) -> str:
    return "\n".join(f"- {s.name}: {_desc(s.description)}" for s in listing)


def listing_xml(listing: Sequence[ListedSkill]) -> str:
    items = "".join(f"<skill>\n<name>\n{s.name}\n</name>\n<description>\n{_desc(s.description)}"
                    f"\n</description>\n<location>\nproject\n</location>\n</skill>\n"
                    for s in listing)
    return f"<available_skills>\n{items}</available_skills>"


def skill_tool(description: str, key: str) -> dict[str, Any]:
    props: dict[str, Any] = {key: {"type": "string",
                                   "description": "The name of a skill from the available-skills "
                                                  "list. Do not guess names."}}
    if key == "skill":
        props["args"] = {"type": "string", "description": "Optional arguments for the skill"}
    return {"name": "Skill", "description": description,
            "input_schema": {"type": "object", "properties": props, "required": [key],
                             "additionalProperties": False}}


def build_request(listing: Sequence[ListedSkill], query: str, *, model: str, layout: str,
                  cli_version: str, system_prompt: str, tool_description: str,
                  extra_tools: Sequence[str], max_tokens: int, cache: bool,
                  sort_listing: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``client.messages.create/stream`` for one trigger trial."""
    shown = sorted(listing, key=lambda s: s.name) if sort_listing else list(listing)
    resolved = layout_for(cli_version, model, layout)
    key = skill_input_key(cli_version)
    description = tool_description or SKILL_TOOL_DESCRIPTION
    if resolved == "tool_xml":
        description += "\n\n" + listing_xml(shown)
    elif resolved == "tool_lines":
        description += "\n\nAvailable skills:\n" + listing_lines(shown)
    tools = [skill_tool(description, key)]
    tools += [ORIENT_TOOLS[name] for name in extra_tools if name in ORIENT_TOOLS]
    system_block: dict[str, Any] = {"type": "text", "text": system_prompt or DEFAULT_SYSTEM}
    if cache:
        system_block["cache_control"] = EPHEMERAL
    reminder = f"<system-reminder>\n{LISTING_HEADER}\n\n{listing_lines(shown)}\n</system-reminder>"
    query_block = {"type": "text", "text": query}
    messages: list[dict[str, Any]]
    if resolved == "reminder":
        listing_block: dict[str, Any] = {"type": "text", "text": reminder}
        if cache:
            listing_block["cache_control"] = EPHEMERAL
        messages = [{"role": "user", "content": [listing_block, query_block]}]
    elif resolved == "system_message":
        messages = [{"role": "user", "content": [query_block]},
                    {"role": "system", "content": [{"type": "text", "text": reminder}]}]
    else:
        messages = [{"role": "user", "content": [query_block]}]
    return {"model": model, "max_tokens": max_tokens, "system": [system_block], "tools": tools,
            "tool_choice": {"type": "auto"}, "messages": messages}
