"""The ``anthropic_api`` executor: a small agent loop with file tools confined to the sandbox.

Tools (the same in every arm; only the skills listed differ): ``list_files``, ``read_file``,
``write_file`` (paths relative to the sandbox; absolute paths, ``..`` and symlinks out of it
are refused) and ``load_skill`` (returns a listed skill's SKILL.md body after the line "Base
directory for this skill: .claude/skills/<name>", as Claude Code's Skill tool does; calling it
is how we know the skill *fired*). The arm's skills are installed as the user has them,
resources included, under ``.claude/skills/`` in the sandbox, as for the CLI, so a skill
that says "run scripts/fill.py" or "see references/api.md" can be followed; files there are
never outputs. The loop runs until the model answers without a tool call, the turn
cap (``max_turns``) or the timeout (``timeout_s``). Tokens and cost come from each response's
usage. The backend's client, retries and pricing are reused (``backend.client``,
``backend._with_retries``, ``backend.estimate_cost_usd``).
"""
from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any

from skilleval.execution import (EXECUTOR_MARKER, ExecutionRequest, ExecutionResult,
                                 collect_outputs, resolve_inside, snapshot)
from skilleval.skill_install import SKILLS_DIR, install_skills

MAX_READ = 200_000
SKILL_BASE = "Base directory for this skill:"  # Claude Code's first line of a loaded skill

TOOL_SPECS = {
    "list_files": {"description": "List files under a folder of the working directory (recursive).",
                   "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
    "read_file": {"description": "Read a file. Text files are returned as UTF-8 text; use "
                                 "encoding='base64' for the raw bytes of a file that is not UTF-8.",
                  "input_schema": {"type": "object", "required": ["path"], "properties": {
                      "path": {"type": "string"}, "encoding": {"type": "string", "enum": ["utf-8", "base64"]}}}},
    "write_file": {"description": "Write a file (parent folders are created). content is UTF-8 "
                                  "text unless encoding='base64'.",
                   "input_schema": {"type": "object", "required": ["path", "content"], "properties": {
                       "path": {"type": "string"}, "content": {"type": "string"},
                       "encoding": {"type": "string", "enum": ["utf-8", "base64"]}}}},
    "load_skill": {"description": "Load the full instructions of one of the available skills by name.",
                   "input_schema": {"type": "object", "required": ["name"],
                                    "properties": {"name": {"type": "string"}}}},
}


def system_prompt(request: ExecutionRequest) -> str:
    lines = [EXECUTOR_MARKER, "You are an agent completing a task in a working directory. Use the "
             "tools to inspect the input files and write every requested file (paths relative to "
             "the working directory). Finish with a short summary of what you did.",
             f"Run: {request.run_label}"]
    shown = [s.listed for s in request.skills if s.model_invocable]  # Claude Code's listing rules
    if shown:
        lines.append("Skills you can load with load_skill when relevant:\n<skills>\n" + "\n".join(
            f"- {s.name}: {s.description}" for s in shown) + "\n</skills>")
    else:
        lines.append("No skills are available for this task.")
    if request.settings.system_prompt:
        lines.append(request.settings.system_prompt)
    return "\n\n".join(lines)


def tool_defs(names: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{"name": n, **TOOL_SPECS[n]} for n in names if n in TOOL_SPECS]


def run_tool(request: ExecutionRequest, name: str, args: dict[str, Any]) -> tuple[str, bool]:
    """Execute one tool call inside the sandbox: (result text, is_error)."""
    root = request.sandbox
    try:
        if name == "list_files":
            base = resolve_inside(root, args.get("path") or ".") if args.get("path") not in (None, "", ".") else root
            hidden = (".skilleval",) if base != root else (".skilleval", ".claude/")  # the task's files
            files = sorted(p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file()
                           and not p.relative_to(root).as_posix().startswith(hidden))
            return "\n".join(files) or "(no files)", False
        if name == "read_file":
            p = resolve_inside(root, args.get("path", ""))
            if not p.is_file():
                return f"no such file: {args.get('path')}", True
            data = p.read_bytes()
            if args.get("encoding") == "base64":
                return base64.b64encode(data[:MAX_READ]).decode(), False
            try:
                return data.decode("utf-8")[:MAX_READ], False
            except UnicodeDecodeError:
                return (f"{args.get('path')} is not valid UTF-8; call read_file again with "
                        "encoding='base64' to get its raw bytes"), True
        if name == "write_file":
            p = resolve_inside(root, args.get("path", ""))
            content = args.get("content", "")
            data = base64.b64decode(content) if args.get("encoding") == "base64" else str(content).encode()
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
            return f"wrote {len(data)} bytes to {args.get('path')}", False
        if name == "load_skill":
            skill = next((s for s in request.skills if s.name == args.get("name")), None)
            if skill is None:
                return f"no skill named {args.get('name')!r}", True
            return f"{SKILL_BASE} {SKILLS_DIR}/{skill.name}\n\n{skill.body}", False
    except PermissionError as exc:
        return f"refused: {_relative(str(exc), root)}", True
    except (OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {_relative(str(exc), root)}", True
    return f"unknown tool {name!r}", True


def _relative(text: str, root: Path) -> str:
    """An error text with the host's sandbox path written as ``.``: the model (and whoever
    reads its transcript) has no business knowing where on the host the sandbox lives."""
    for base in {str(root.resolve()), str(root)}:
        text = text.replace(base + "/", "").replace(base, ".")
    return text


async def execute_via_api(backend: Any, request: ExecutionRequest) -> ExecutionResult:
    started = time.perf_counter()
    install_skills(request.skills, request.sandbox)  # before the snapshot: never an output
    before = snapshot(request.sandbox)
    state = {"in": 0, "out": 0, "turns": 0, "tools": {}, "errors": 0, "fired": [], "log": []}
    try:
        status = await asyncio.wait_for(_loop(backend, request, state), request.timeout_s)
        error = None
    except asyncio.TimeoutError:
        status, error = "timeout", f"execution exceeded timeout_s={request.timeout_s}"
    except Exception as exc:  # noqa: BLE001 - an API failure is an outcome of the execution
        status, error = "error", f"{type(exc).__name__}: {getattr(exc, 'failure', exc)}"
    cost = backend.estimate_cost_usd(state["in"], state["out"]) or 0.0
    names = {s.name for s in request.skills}
    return ExecutionResult(
        key=request.key, status=status, transcript="\n".join(state["log"]),
        outputs=collect_outputs(request.sandbox, before), duration_s=time.perf_counter() - started,
        input_tokens=state["in"], output_tokens=state["out"], cost_usd=cost,
        tool_calls=state["tools"], turns=state["turns"], errors=state["errors"],
        skill_fired=any(f in names for f in state["fired"]) if request.skills else None,
        fired_skills=tuple(state["fired"]), error=error,
        effective_settings={**request.settings.to_dict(), "tools": [t["name"] for t in tool_defs(request.settings.tools)]},
        backend_version=getattr(backend, "version", None))


async def _loop(backend: Any, request: ExecutionRequest, state: dict[str, Any]) -> str:
    system = system_prompt(request)
    tools = tool_defs(request.settings.tools)
    messages: list[dict[str, Any]] = [{"role": "user", "content": request.prompt}]
    log = state["log"]
    log.append(f"## Task\n\n{request.prompt}\n")
    max_tokens = max(4096, int(getattr(getattr(backend, "params", None), "max_tokens", 0) or 0))
    for _ in range(max(1, request.max_turns)):
        kwargs = {"model": request.model, "max_tokens": max_tokens, "system": system,
                  "tools": tools, "messages": messages}
        msg, _retries = await backend._with_retries(lambda: backend.client.messages.create(**kwargs))
        state["turns"] += 1
        usage = msg.usage
        state["in"] += (usage.input_tokens or 0) + (getattr(usage, "cache_read_input_tokens", 0) or 0) \
            + (getattr(usage, "cache_creation_input_tokens", 0) or 0)
        state["out"] += usage.output_tokens or 0
        content = [{k: v for k, v in b.model_dump(exclude_none=True).items()
                    if k in ("type", "id", "name", "input", "text")} for b in msg.content]
        content = [b for b in content if b.get("type") in ("text", "tool_use")]
        calls = [b for b in content if b["type"] == "tool_use"]
        for b in content:
            if b["type"] == "text" and b.get("text"):
                log.append(b["text"] + "\n")
        if not calls:
            return "ok"
        results = []
        for c in calls:
            name, args = c["name"], c.get("input") or {}
            state["tools"][name] = state["tools"].get(name, 0) + 1
            if name == "load_skill":
                state["fired"].append(str(args.get("name")))
            text, is_error = run_tool(request, name, args)
            state["errors"] += int(is_error)
            shown = json.dumps({k: (v if k != "content" else f"<{len(str(v))} chars>") for k, v in args.items()})
            log.append(f"### Turn {state['turns']}: {name} {shown}\n\n"
                       + ("ERROR: " if is_error else "") + (text[:400] + ("…" if len(text) > 400 else "")) + "\n")
            results.append({"type": "tool_result", "tool_use_id": c["id"], "content": text,
                            **({"is_error": True} if is_error else {})})
        messages = messages + [{"role": "assistant", "content": content},
                               {"role": "user", "content": results}]
    return "turn_cap"
