"""What the simulated model answers to one /v1/messages request.

1. **Message hooks** run first. A hook is ``(body, conversation, seed) -> content | None``;
   the functional-eval executor registers one (``register_message_hook``) so the simulator can
   issue file tool calls in its agent loop. A hook that returns None passes.
2. **Trigger turns.** When the request lists skills (anywhere, see ``protocol``), has a
   ``Skill`` tool and no Skill call yet, the simulator decides with ``skilleval.sim.model``
   exactly as the ``stub`` backend does, seeded by ``draw_seed(model, listing, query, repeat)``.
   ``repeat`` comes from the ``x-skilleval-sim`` hint when our own backends send it, else it
   is the number of requests already *decided* for the same (model, listing, query) in this
   process. With ``orient_rate`` > 0 a share of first turns make an orientation tool call
   (``Read``/``Bash``/``Glob`` when offered) and decide on the next turn, so harnesses must
   look past the first tool call.
3. Everything else (follow-up turns after a Skill call, prompts with no listing) is answered
   with text from ``skilleval.sim.completion.respond``.
"""
from __future__ import annotations

import hashlib
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from skilleval.sim import model as sim
from skilleval.sim.completion import respond
from skilleval.sim.config import Faults, SimConfig
from skilleval.sim.protocol import Conversation, apply_order, parse_hint, parse_request, parse_sample

MessageHook = Callable[[dict[str, Any], Conversation, bytes], "list[dict[str, Any]] | None"]
_HOOKS: list[MessageHook] = []
_ORIENT_TOOLS = ("Read", "Glob", "Bash", "LS")


def register_message_hook(hook: MessageHook) -> None:
    """Let another module answer some requests (first non-None answer wins)."""
    if hook not in _HOOKS:
        _HOOKS.append(hook)


def _load_hooks() -> None:
    import importlib

    for module in ("skilleval.sim.agent.serve_hook",):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


@dataclass
class Answer:
    content: list[dict[str, Any]]
    stop_reason: str
    kind: str                 # "trigger", "orient", "completion", "hook"
    fired: str | None = None
    conversation: Conversation | None = None
    repeat: int | None = None


@dataclass
class Decisions:
    """Per-process memory of decided trigger requests (and a short log for tests)."""

    counts: Counter[tuple[Any, ...]] = field(default_factory=Counter)
    completions: Counter[str] = field(default_factory=Counter)
    log: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_repeat(self, key: tuple[Any, ...]) -> int:
        with self.lock:
            n = self.counts[key]
            self.counts[key] += 1
            return n


def _tool_id() -> str:
    return "toolu_" + uuid.uuid4().hex[:24]


def answer(body: dict[str, Any], headers: dict[str, str], config: SimConfig,
           decisions: Decisions, faults: Faults) -> Answer:
    conv = parse_request(body)
    seed = hashlib.sha256(repr((conv.model, conv.last_user_text, len(body.get("messages") or [])))
                          .encode()).digest()
    hostile = _hostile_call(conv, config, decisions)
    if hostile is not None:
        return Answer([hostile], "tool_use", "hook", conversation=conv)
    _load_hooks()
    for hook in list(_HOOKS):
        content = hook(body, conv, seed)
        if content is not None:
            stop = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
            return Answer(content, stop, "hook", conversation=conv)
    deciding = (conv.listing and conv.query and conv.has_skill_tool
                and not conv.skill_already_called
                and (not conv.last_results or conv.answering_orientation))
    if deciding:
        orient_tool = next((t for t in _ORIENT_TOOLS if t in conv.tool_names), None)
        if (not conv.last_results and orient_tool and config.orient_rate > 0
                and faults.uniform() < config.orient_rate):
            return Answer([_orientation_call(orient_tool, conv)], "tool_use", "orient",
                          conversation=conv)
        return _decide(conv, body, headers, config, decisions)
    return _complete(conv, decisions, parse_sample(headers.get("x-skilleval-sim")))


def _hostile_call(conv: Conversation, config: SimConfig, decisions: Decisions) -> dict[str, Any] | None:
    """The next queued hostile tool call whose tool the request offers (then it is spent)."""
    with decisions.lock:
        for i, call in enumerate(config.hostile_tool_calls):
            if call.get("name") in conv.tool_names:
                config.hostile_tool_calls.pop(i)
                return {"type": "tool_use", "id": _tool_id(), "name": call["name"],
                        "input": dict(call.get("input") or {})}
    return None


def _orientation_call(tool: str, conv: Conversation) -> dict[str, Any]:
    base = conv.cwd or "/tmp"
    inputs = {"Read": {"file_path": f"{base}/README.md"}, "Glob": {"pattern": "*"},
              "Bash": {"command": "ls", "description": "List files"}, "LS": {"path": base}}
    return {"type": "tool_use", "id": _tool_id(), "name": tool, "input": inputs[tool]}


def _decide(conv: Conversation, body: dict[str, Any], headers: dict[str, str], config: SimConfig,
            decisions: Decisions) -> Answer:
    raw = headers.get("x-skilleval-sim")
    user_id = str(((body.get("metadata") or {}).get("user_id")) or "")
    if raw is None and user_id.startswith("skilleval-sim:"):  # batches carry no headers
        raw = user_id[len("skilleval-sim:"):]
    hint_repeat, order = parse_hint(raw)
    listing = apply_order(conv.listing, order)
    query = conv.query or ""
    if hint_repeat is None:
        repeat = decisions.next_repeat((conv.model, listing, query))
    else:
        repeat = hint_repeat
        with decisions.lock:
            decisions.counts[(conv.model, listing, query)] += 1
    seed = sim.draw_seed(conv.model, listing, query, repeat)
    fired = sim.decide(listing, query, conv.model, seed, config.sim_params).fired
    with decisions.lock:
        decisions.log.append({"model": conv.model, "query": query, "repeat": repeat,
                              "listing": [s.name for s in listing], "fired": fired,
                              "descriptions": [s.description for s in listing]})
        del decisions.log[:-2000]
    if fired is not None and config.hostile_skill_name is not None:
        fired = config.hostile_skill_name
    if fired is not None:
        block = {"type": "tool_use", "id": _tool_id(), "name": "Skill",
                 "input": {conv.skill_input_key: fired}}
        return Answer([block], "tool_use", "trigger", fired, conv, repeat)
    text = respond(query, seed)
    return Answer([{"type": "text", "text": text}], "end_turn", "trigger", None, conv, repeat)


def _complete(conv: Conversation, decisions: Decisions, sample_key: str | None = None) -> Answer:
    """A text answer. A repeated identical prompt gets its next sample, as a model sampling
    at a temperature would, unless the caller keyed the request (``skilleval.sample_key``):
    then the sample follows the key, whatever the order requests arrive in."""
    prompt = conv.last_user_text or conv.query or ""
    if conv.last_results and not prompt:
        prompt = conv.query or ""
        text = "Done."
    else:
        if sample_key is not None:
            # keyed: (model, prompt, key) only -- the system text of a client such as the CLI
            # holds its temporary working folder, different on every call
            seed = hashlib.sha256(f"{conv.model}|{prompt}|key:{sample_key}".encode()).digest()
        else:
            digest = hashlib.sha256(f"{conv.model}|{conv.system_text}|{prompt}".encode()).hexdigest()
            with decisions.lock:
                sample = decisions.completions[digest]
                decisions.completions[digest] += 1
            seed = hashlib.sha256(f"{digest}|{sample}".encode()).digest()
        text = respond(prompt, seed)
    return Answer([{"type": "text", "text": text}], "end_turn", "completion", conversation=conv)
