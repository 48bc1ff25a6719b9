"""The simulated model's side of the ``claude_cli`` executor, for ``serve-sim`` (not Claude).

The same steps as `skilleval.sim.agent.agent.agent_turn`, spoken in Claude Code's own tool
dialect, so that ``functional_eval`` with the real ``claude`` CLI against serve-sim really
works (files written in the sandbox, then graded):

1. with skills listed and nothing done yet: the lexical trigger model decides (task as the
   query) and calls ``Skill {"skill": name}``; the CLI then sends the skill's body back;
2. ``Glob {"pattern": "**/*"}`` (absolute paths come back);
3. ``Read {"file_path": <absolute>}`` for every input the task names (the CLI numbers the
   lines; the numbers are stripped);
4. ``Write {"file_path": <absolute>, "content": ...}`` for every output, computed by
   `skilleval.sim.agent.tidy` from what it read, guided by the loaded skill's body;
5. a final text summary.

It answers only requests that carry the executor marker and offer Claude Code's ``Write``
tool; anything else falls through (None).
"""
from __future__ import annotations

import random
import re
import uuid
from typing import Any

from skilleval.execution import EXECUTOR_MARKER
from skilleval.sim import model as sim
from skilleval.sim.agent.seeds import run_seed
from skilleval.sim.agent.tidy import Care, tidy, unsupported
from skilleval.sim.protocol import Conversation

_NUMBERED = re.compile(r"^\s*\d+(?:\u2192|\t)(.*)$")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_PATHISH = re.compile(r"[A-Za-z0-9_.\-/]+\.[A-Za-z0-9]+")
_SKILL_BASE = "Base directory for this skill:"


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") == "text":
            out.append(str(b.get("text", "")))
        elif isinstance(b, dict) and b.get("type") == "tool_result":
            out.extend(_texts(b.get("content")))
    return out


def _use(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": name, "input": args}


def _file_text(result: str) -> str:
    """The file's text from a Read result: reminders dropped, ``cat -n`` numbers stripped."""
    lines = _REMINDER.sub("", result).splitlines()
    numbered = [m.group(1) for m in map(_NUMBERED.match, lines) if m]
    return "\n".join(numbered) + "\n" if numbered else "\n".join(lines)


def _history(body: dict[str, Any]) -> tuple[list[tuple[dict[str, Any], str | None]], str]:
    """(tool calls with their result text, the loaded skill's body if one was loaded)."""
    calls: dict[str, dict[str, Any]] = {}
    results: dict[str, str] = {}
    guide = ""
    for m in body.get("messages") or []:
        content = m.get("content") if isinstance(m, dict) else None
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                calls[str(b.get("id"))] = b
            elif b.get("type") == "tool_result" and not b.get("is_error"):
                results[str(b.get("tool_use_id"))] = "\n".join(_texts(b.get("content")))
            elif b.get("type") == "text" and str(b.get("text", "")).startswith(_SKILL_BASE):
                guide = str(b["text"]).split("\n\n", 1)[-1]
    return [(c, results.get(i)) for i, c in calls.items()], guide


def cli_turn(body: dict[str, Any], conv: Conversation) -> list[dict[str, Any]] | None:
    system = conv.system_text
    if EXECUTOR_MARKER not in system or "Write" not in conv.tool_names:
        return None
    task = conv.query or ""
    done, guide = _history(body)
    names = [c.get("name") for c, _ in done]
    own_seed = run_seed(system, task)
    if conv.listing and not done and "Skill" in conv.tool_names:
        fired = sim.decide(conv.listing, task, conv.model, own_seed).fired
        if fired:
            return [{"type": "text", "text": f"This looks like a job for the {fired} skill."},
                    _use("Skill", {"skill": fired})]
    if "Glob" not in names:
        return [_use("Glob", {"pattern": "**/*"})]
    listed = next((r or "" for c, r in done if c.get("name") == "Glob"), "")
    mentioned = set(_PATHISH.findall(task))
    cwd = (conv.cwd or "").rstrip("/") or None
    inputs: dict[str, str] = {}  # sandbox-relative -> absolute
    for line in listed.splitlines():
        path = line.strip()  # relative to the working directory, or absolute
        if any(part in ("/" + path) for part in ("/.claude/", "/.skilleval/", "/outputs/")):
            continue
        rel = next((m for m in mentioned if path == m or path.endswith("/" + m)), None)
        if rel and (path.startswith("/") or cwd):
            inputs[rel] = path if path.startswith("/") else f"{cwd}/{path}"
    cwd = cwd or next((p[: -len(r) - 1] for r, p in inputs.items()), None)
    got = {str(c["input"].get("file_path")): r for c, r in done
           if c.get("name") == "Read" and r is not None}
    missing = [p for p in inputs.values() if p not in got]
    if missing:
        return [_use("Read", {"file_path": p}) for p in missing]
    if "Write" not in names:
        why = unsupported(task, list(inputs))
        if why is None and cwd:
            data = {rel: _file_text(got[p]).encode("utf-8") for rel, p in inputs.items()}
            outputs, log = tidy(task, data, Care(random.Random(int.from_bytes(own_seed[:8], "big")), guide))
            blocks: list[dict[str, Any]] = [{"type": "text", "text": "; ".join(log) or "Writing the outputs."}]
            blocks += [_use("Write", {"file_path": f"{cwd.rstrip('/')}/{path}",
                                      "content": out.decode("utf-8", "replace")})
                       for path, out in outputs.items()]
            if len(blocks) > 1:
                return blocks
        return [{"type": "text", "text": "I cannot do this task: " + (why or "no working directory")}]
    written = [str(c["input"].get("file_path")) for c, _ in done if c.get("name") == "Write"]
    return [{"type": "text", "text": "Done. Wrote " + (", ".join(written) or "nothing") + "."}]
