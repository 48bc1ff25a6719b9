"""Simulated text completion, shared by the `stub` backend and `serve-sim`.

The simulator cannot write prose. Instead, each prompt skilleval itself sends (a proposer
asking for a description, a grader asking for JSON, ...) carries a task marker line
``[[skilleval-task: NAME]]`` (``skilleval.task_marker``); a module of the simulator registers a
*responder* for NAME (``sim/proposer_responder.py``, ``sim/drafter_responder.py``,
``sim/agent/responders.py``) that produces a well-formed answer from the prompt's content by
simple, documented rules. A prompt with no known marker gets a short generic answer.

This keeps the simulator honest (its answers are derived from what it was given) while
letting every code path that parses model output run offline.
"""
from __future__ import annotations

import threading
from typing import Callable

from skilleval.task_marker import TASK_MARKER, task_marker  # noqa: F401  (re-exported)

Responder = Callable[[str, bytes], str]
"""(prompt, seed) -> answer text. The seed lets a responder vary between samples."""

_RESPONDERS: dict[str, Responder] = {}


def register_responder(name: str, responder: Responder) -> None:
    _RESPONDERS[name] = responder


def respond(prompt: str, seed: bytes) -> str:
    _load_builtin_responders()
    match = TASK_MARKER.search(prompt)
    if match and match.group(1) in _RESPONDERS:
        return _RESPONDERS[match.group(1)](prompt, seed)
    words = len(prompt.split())
    return f"(simulated completion: received {words} words; no task marker recognised)"


_loaded = False
_load_lock = threading.Lock()


# The simulator's own modules that answer skilleval's prompts; each registers on import.
_BUILTIN_RESPONDERS = ("skilleval.sim.proposer_responder", "skilleval.sim.drafter_responder",
                       "skilleval.sim.agent.responders")


def _load_builtin_responders() -> None:
    """Import the responders for the prompts the simulator answers (they register on import).

    serve-sim answers requests on several threads: the flag is set only once the imports
    are done, under a lock, or a concurrent first request would find no responder yet.
    """
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        import importlib

        for module in _BUILTIN_RESPONDERS:
            importlib.import_module(module)
        _loaded = True
