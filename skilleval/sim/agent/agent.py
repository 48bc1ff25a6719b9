"""The simulated model's side of the API executor's agent loop (used by ``serve-sim``; not Claude).

`agent_turn(body, seed)` answers one /v1/messages request whose system prompt carries the
executor marker, with real tool calls that the executor runs in the sandbox:

1. if skills are listed and none was loaded yet: decide with the lexical trigger model
   (`skilleval.sim.model.decide`, task prompt as the query) and call ``load_skill`` if one fires;
2. ``list_files``; 3. ``read_file`` for every input (re-reading non-UTF-8 files as base64);
4. ``write_file`` for every output, computed by `skilleval.sim.agent.tidy` from the bytes
   it read, guided by the loaded skill's body; 5. a final text summary.

The seed comes from the system prompt (which names the run) and the task, so repeats differ
and reruns repeat. Returns None for requests that are not executor turns.
"""
from __future__ import annotations

import base64
import random
import re
import uuid
from typing import Any

from skilleval.domain import ListedSkill
from skilleval.execution import EXECUTOR_MARKER
from skilleval.sim import model as sim
from skilleval.sim.agent.seeds import run_seed
from skilleval.sim.agent.tidy import Care, tidy, unsupported

_SKILL_LINE = re.compile(r"^- ([A-Za-z0-9_.:\-]+): (.*)$", re.M)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return ""


def _use(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": name, "input": args}


def agent_turn(body: dict[str, Any], seed: bytes = b"") -> list[dict[str, Any]] | None:
    system = _text(body.get("system"))
    if EXECUTOR_MARKER not in system:
        return None
    messages = body.get("messages") or []
    task = _text(messages[0].get("content")) if messages else ""
    calls: dict[str, dict[str, Any]] = {}
    results: dict[str, dict[str, Any]] = {}
    for m in messages[1:]:
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if b.get("type") == "tool_use":
                calls[b["id"]] = b
            elif b.get("type") == "tool_result":
                results[b["tool_use_id"]] = b
    done = [(c, results.get(i)) for i, c in calls.items()]
    own_seed = run_seed(system, task)
    listed = re.search(r"<skills>\n(.*?)\n</skills>", system, re.S)
    listing = tuple(ListedSkill(n, d) for n, d in _SKILL_LINE.findall(listed.group(1))) if listed else ()
    loads = [(c, r) for c, r in done if c["name"] == "load_skill"]
    if listing and not loads and not any(c["name"] != "load_skill" for c, _ in done):
        fired = sim.decide(listing, task, str(body.get("model", "")), own_seed).fired
        if fired:
            return [{"type": "text", "text": f"This looks like a job for the {fired} skill."},
                    _use("load_skill", {"name": fired})]
    guide = next((_text(r.get("content")) for c, r in loads if r and not r.get("is_error")), "")
    if guide.startswith("Base directory for this skill:"):  # the skill's body follows that line
        guide = guide.split("\n\n", 1)[-1]
    if not any(c["name"] == "list_files" for c, _ in done):
        return [_use("list_files", {"path": "."})]
    listed_files = next(_text(r.get("content")) for c, r in done if c["name"] == "list_files" and r)
    inputs = [p for p in listed_files.splitlines() if p and not p.startswith("outputs/") and p in task]
    inputs = inputs or [p for p in listed_files.splitlines() if p and not p.startswith("outputs/")]
    got: dict[str, bytes] = {}
    for c, r in done:
        if c["name"] == "read_file" and r and not r.get("is_error"):
            content = _text(r.get("content"))
            path = c["input"].get("path")
            got[path] = base64.b64decode(content) if c["input"].get("encoding") == "base64" else content.encode()
    reread = [c["input"]["path"] for c, r in done if c["name"] == "read_file" and r and r.get("is_error")
              and "base64" in _text(r.get("content")) and c["input"]["path"] not in got]
    missing = [p for p in inputs if p not in got and p not in reread]
    if missing or reread:
        return ([_use("read_file", {"path": p}) for p in missing]
                + [_use("read_file", {"path": p, "encoding": "base64"}) for p in reread])
    if not any(c["name"] == "write_file" for c, _ in done):
        why = unsupported(task, inputs)
        if why is not None:  # never another skill's work: say so and write nothing
            return [{"type": "text", "text": f"I cannot do this task: {why}."}]
        outputs, log = tidy(task, {p: got[p] for p in inputs if p in got},
                            Care(random.Random(int.from_bytes(own_seed[:8], "big")), guide))
        blocks: list[dict[str, Any]] = [{"type": "text", "text": "; ".join(log)}]
        for path, data in outputs.items():
            try:
                blocks.append(_use("write_file", {"path": path, "content": data.decode("utf-8")}))
            except UnicodeDecodeError:
                blocks.append(_use("write_file", {"path": path, "content": base64.b64encode(data).decode(),
                                                  "encoding": "base64"}))
        if len(blocks) > 1:
            return blocks
    written = [c["input"].get("path") for c, _ in done if c["name"] == "write_file"]
    return [{"type": "text", "text": "Done. Wrote " + (", ".join(written) or "nothing") + "."}]
