"""The ``claude_cli`` executor: the full ``claude -p`` agent, run inside the sandbox.

The sandbox is the project folder: the arm's skills are installed as real skills under
``.claude/skills/<name>/SKILL.md``, the CLI gets an isolated config dir (``.skilleval/config``,
both hidden from the output list), no MCP servers, project settings only, stdin closed, a turn
cap (``--max-turns``) and a timeout after which its whole process group is killed. The
transcript is rebuilt from stream-json; outputs are the files written; timing, turns, tokens
and cost come from the ``result`` event. The skill *fired* when a ``Skill`` tool call names it.
The tools offered map from the arm's settings (list_files -> Glob/LS, read_file -> Read/Grep,
write_file -> Write/Edit, load_skill -> Skill) and are the same in every arm.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import time
from typing import Any

from skilleval.backends.cli_process import ISOLATION_SETTINGS, kill_group
from skilleval.backends.cli_stream import CliRun, reported_api_wait_s
from skilleval.execution import (EXECUTOR_MARKER, ExecutionRequest, ExecutionResult,
                                 collect_outputs, snapshot)

CLI_TOOLS = {"list_files": ("Glob", "LS"), "read_file": ("Read", "Grep"),
             "write_file": ("Write", "Edit"), "load_skill": ("Skill",)}


def cli_tools(names: tuple[str, ...]) -> list[str]:
    return [t for n in names for t in CLI_TOOLS.get(n, (n,))]


def install_skills(request: ExecutionRequest) -> None:
    """The arm's skills as real skill folders, resources (scripts/, references/) included."""
    from skilleval.skill_install import install_skills as install

    install(request.skills, request.sandbox)


def argv(backend: Any, request: ExecutionRequest) -> list[str]:
    args = [backend.executable, "-p", "--output-format", "stream-json", "--verbose",
            "--model", request.model, "--max-turns", str(request.max_turns),
            "--setting-sources", "project", "--strict-mcp-config", "--no-session-persistence",
            "--settings", ISOLATION_SETTINGS, "--permission-mode", "acceptEdits",
            "--allowedTools", ",".join(cli_tools(request.settings.tools))]
    # The same opening line as the API executor's system prompt (how serve-sim tells a task
    # from a trigger trial), and the run's id, so repeats are distinguishable.
    extra = "\n".join(x for x in (EXECUTOR_MARKER, f"Run: {request.run_label}",
                                   request.settings.system_prompt) if x)
    args += ["--append-system-prompt", extra]
    return args + list(getattr(backend.params, "extra_args", []) or []) + ["--", request.prompt]


class StreamState:
    """Folds stream-json events into a transcript, tool counts and the result event."""

    def __init__(self, skills: set[str]) -> None:
        self.skills = skills
        self.log: list[str] = []
        self.tools: dict[str, int] = {}
        self.errors = 0
        self.fired: list[str] = []
        self.result: dict[str, Any] | None = None
        self.usage = CliRun()  # the trial path's token accounting, one per API message

    def feed(self, line: bytes) -> None:
        from skilleval.backends.cli_stream import skill_called

        self.usage.feed(line)
        try:
            ev = json.loads(line)
        except ValueError:
            return
        kind = ev.get("type")
        if kind == "assistant":
            for b in (ev.get("message") or {}).get("content") or []:
                if b.get("type") == "text" and b.get("text"):
                    self.log.append(b["text"] + "\n")
                elif b.get("type") == "tool_use":
                    name, args = b.get("name", "?"), b.get("input") or {}
                    self.tools[name] = self.tools.get(name, 0) + 1
                    fired = skill_called(name, args)
                    if fired:
                        self.fired.append(fired)
                    self.log.append(f"### {name} {json.dumps(args)[:300]}\n")
        elif kind == "user":
            content = (ev.get("message") or {}).get("content")
            for b in content if isinstance(content, list) else []:
                if b.get("type") == "tool_result":
                    text = b.get("content")
                    text = text if isinstance(text, str) else json.dumps(text)
                    if b.get("is_error"):
                        self.errors += 1
                    self.log.append(("ERROR: " if b.get("is_error") else "") + text[:400] + "\n")
        elif kind == "result":
            self.result = ev


async def execute_via_cli(backend: Any, request: ExecutionRequest) -> ExecutionResult:
    started = time.perf_counter()
    install_skills(request)
    config = request.sandbox / ".skilleval" / "config"
    config.mkdir(parents=True, exist_ok=True)
    before = snapshot(request.sandbox)
    state = StreamState({s.name for s in request.skills})
    state.log.append(f"## Task\n\n{request.prompt}\n")
    proc = await asyncio.create_subprocess_exec(
        *argv(backend, request), cwd=request.sandbox, env=backend._env(config, None),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True, limit=64 * 1024 * 1024)
    spawned = time.monotonic()
    status, error = "ok", None
    try:
        async def read() -> None:
            assert proc.stdout is not None
            while line := await proc.stdout.readline():
                state.feed(line)
            await proc.wait()
        await asyncio.wait_for(read(), request.timeout_s)
    except asyncio.TimeoutError:
        status, error = "timeout", f"execution exceeded timeout_s={request.timeout_s}"
    finally:
        await kill_group(proc)
    stderr = (await proc.stderr.read()).decode(errors="replace")[-400:] if proc.stderr else ""
    # a task that waited on the API most of its life lets the cap grow (see cli_gate)
    backend.gate.observe(time.monotonic() - spawned, reported_api_wait_s(state.result))
    res = state.result or {}
    if status == "ok":
        if res.get("subtype") == "error_max_turns":
            status = "turn_cap"
        elif res.get("is_error") or not res:
            status, error = "error", str(res.get("result") or stderr.strip() or
                                         f"claude exited {proc.returncode} without a result")
    # priced like a trial (CliRun.priced); a killed run's messages still count
    tokens, cost = state.usage.priced(request.model, getattr(backend.params, "pricing_file", None))
    if res.get("result"):
        state.log.append(f"## Result\n\n{res['result']}\n")
    return ExecutionResult(
        key=request.key, status=status, transcript="\n".join(state.log),
        outputs=collect_outputs(request.sandbox, before),
        duration_s=(res.get("duration_ms") or (time.perf_counter() - started) * 1000) / 1000,
        input_tokens=tokens.total_input, output_tokens=tokens.output_tokens, cost_usd=cost,
        tool_calls=state.tools, turns=int(res.get("num_turns") or 0), errors=state.errors,
        skill_fired=any(f in state.skills for f in state.fired) if request.skills else None,
        fired_skills=tuple(state.fired), error=error,
        effective_settings={**request.settings.to_dict(), "cli_tools": cli_tools(request.settings.tools)},
        backend_version=f"claude_cli/{getattr(backend, 'cli_version', '?')}")
