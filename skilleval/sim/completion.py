"""Simulated text completion, shared by the `stub` backend and `serve-sim`.

The simulator cannot write prose. Instead, each prompt skilleval itself sends (a proposer
asking for a description, a grader asking for JSON, ...) carries a task marker line
``[[skilleval-task: NAME]]``; the module that builds that prompt also registers a
*responder* for NAME that produces a well-formed answer from the prompt's content by simple,
documented rules. A prompt with no known marker gets a short generic answer.

This keeps the simulator honest (its answers are derived from what it was given) while
letting every code path that parses model output run offline.
"""
from __future__ import annotations

import re
import threading
from typing import Callable

Responder = Callable[[str, bytes], str]
"""(prompt, seed) -> answer text. The seed lets a responder vary between samples."""

_RESPONDERS: dict[str, Responder] = {}
_MARKER = re.compile(r"\[\[skilleval-task:\s*([a-z0-9_\-]+)\s*\]\]")


def task_marker(name: str) -> str:
    """The line to put in a prompt so the simulator knows which responder answers it."""
    return f"[[skilleval-task: {name}]]"


def register_responder(name: str, responder: Responder) -> None:
    _RESPONDERS[name] = responder


def respond(prompt: str, seed: bytes) -> str:
    _load_builtin_responders()
    match = _MARKER.search(prompt)
    if match and match.group(1) in _RESPONDERS:
        return _RESPONDERS[match.group(1)](prompt, seed)
    words = len(prompt.split())
    return f"(simulated completion: received {words} words; no task marker recognised)"


_loaded = False
_load_lock = threading.Lock()


def _load_builtin_responders() -> None:
    """Import the modules whose prompts the simulator answers (they register on import).

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

        for module in ("skilleval.optimize.prompts", "skilleval.functional.prompts",
                       "skilleval.evalsets.llm"):
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:  # a module not written yet must not break the stub
                if exc.name != module:
                    raise
        _loaded = True
