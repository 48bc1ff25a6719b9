"""The `stub` backend's executor: a documented simulation of an agent doing the task (not Claude).

What it does, in order, deterministically per execution key:

1. **Does the skill load?** When the arm lists skills, the simulated model's trigger decision
   (`skilleval.sim.model.decide`, the same lexical model as trigger trials) is drawn with the
   task prompt as the query. If our skill fires, its SKILL.md body becomes the *guide*.
2. **Does the work, for real**, in the sandbox: reads the input files, and writes the outputs
   the prompt names, via `skilleval.sim.agent.tidy` (CSV/TSV cleaning). Each error-prone
   step is done right with probability 0.92 when the guide's instructions cover it and 0.5
   otherwise, so following the skill's instructions makes outputs better, and an arm without
   the skill (or with a skill that never loaded) does a sloppier job.
3. **Reports like an agent would**: a transcript (markdown), tool-call counts
   (Skill/Read/Write), turns, simulated tokens (about 4 characters per token of what it read
   and wrote, plus the skill body when loaded) and a simulated duration. A run that needs more
   turns than ``max_turns`` stops there, with status ``turn_cap`` and partial outputs.
"""
from __future__ import annotations

import hashlib
import random
from typing import Any

from skilleval.execution import (ExecutionRequest, ExecutionResult, collect_outputs,
                                 resolve_inside, snapshot)
from skilleval.sim import model as sim
from skilleval.sim.agent.tidy import Care, tidy, unsupported


def _seed(key: str, salt: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{key}|{salt}".encode(), digest_size=8).digest(), "big")


def decide_skill(request: ExecutionRequest, model: str, params: Any = None) -> str | None:
    """Which listed skill (if any) the simulated agent loads for this task."""
    if not request.skills:
        return None
    listing = tuple(s.listed for s in request.skills if s.model_invocable)  # as Claude Code lists
    if not listing:
        return None
    seed = hashlib.sha256(f"exec|{request.key}".encode()).digest()
    kwargs = {"params": params} if params is not None else {}
    return sim.decide(listing, request.prompt, model, seed, **kwargs).fired


def simulate_execution(request: ExecutionRequest, backend: Any = None) -> ExecutionResult:
    model = getattr(backend, "model", request.model)
    fired = decide_skill(request, model, getattr(backend, "sim_params", None))
    guide = next((s.body for s in request.skills if s.name == fired), "")
    rng = random.Random(_seed(request.key, "care"))
    before = snapshot(request.sandbox)
    inputs = {p: resolve_inside(request.sandbox, p).read_bytes() for p in request.input_files}
    why = unsupported(request.prompt, request.input_files)  # (the backend refuses these first)
    outputs, log = ({}, [f"cannot do this task: {why}"]) if why else tidy(request.prompt, inputs,
                                                                           Care(rng, guide))

    steps: list[str] = [f"## Task\n\n{request.prompt}\n"]
    tool_calls: dict[str, int] = {}
    turns = 0
    status = "ok"

    def step(tool: str, text: str) -> bool:
        nonlocal turns, status
        if turns >= request.max_turns:
            status = "turn_cap"
            return False
        turns += 1
        tool_calls[tool] = tool_calls.get(tool, 0) + 1
        steps.append(f"### Turn {turns}: {tool}\n\n{text}\n")
        return True

    if fired:
        step("Skill", f"Loaded skill `{fired}` and read its instructions "
                      f"({len(guide.split())} words).")
    for p in request.input_files:
        if not step("Read", f"Read `{p}` ({len(inputs[p])} bytes)."):
            break
    written: list[str] = []
    for path, data in outputs.items():
        if not step("Write", f"Wrote `{path}` ({len(data)} bytes)."):
            break
        target = resolve_inside(request.sandbox, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(path)
    if status == "ok":
        turns += 1
        steps.append("## Result\n\n" + "\n".join(f"- {line}" for line in log) + "\n")
    else:
        steps.append(f"## Stopped\n\nTurn cap of {request.max_turns} reached.\n")

    read_chars = sum(len(b) for b in inputs.values()) + len(request.prompt) + len(guide)
    write_chars = sum(len(outputs[p]) for p in written)
    jitter = random.Random(_seed(request.key, "cost"))
    input_tokens = int((read_chars / 4 + 900 * turns) * jitter.uniform(0.9, 1.1))
    output_tokens = int((write_chars / 4 + 120 * turns) * jitter.uniform(0.9, 1.1))
    duration = round(4.0 + 2.5 * turns + write_chars / 2000 + jitter.uniform(0, 3), 3)
    cost = 0.0
    if backend is not None and hasattr(backend, "estimate_cost_usd"):
        cost = backend.estimate_cost_usd(input_tokens, output_tokens) or 0.0
    return ExecutionResult(
        key=request.key, status=status, transcript="\n".join(steps),
        outputs=collect_outputs(request.sandbox, before), duration_s=duration,
        input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost,
        tool_calls=tool_calls, turns=turns, errors=0,
        skill_fired=(fired is not None and any(s.name == fired for s in request.skills))
        if request.skills else None,
        fired_skills=(fired,) if fired else (),
        effective_settings=request.settings.to_dict(),
        backend_version=getattr(backend, "harness_version", "sim"),
    )
