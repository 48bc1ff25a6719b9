"""The task-marker line that names what a prompt asks for.

Each prompt skilleval itself sends (a proposer asking for a description, a grader asking for
JSON, a drafter asking for an eval set) starts with ``[[skilleval-task: NAME]]``. A real model
ignores the line; the offline simulator (``skilleval.sim.completion``) reads it to pick the
rules it answers by. Product modules build prompts with it and never import the simulator.
"""
from __future__ import annotations

import re

TASK_MARKER = re.compile(r"\[\[skilleval-task:\s*([a-z0-9_\-]+)\s*\]\]")


def task_marker(name: str) -> str:
    """The line to put in a prompt so the simulator knows which responder answers it."""
    return f"[[skilleval-task: {name}]]"
