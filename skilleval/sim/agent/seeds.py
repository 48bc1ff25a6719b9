"""The seed a simulated agent works from: which run this is, and the task.

Our executors put a ``Run: <label>`` line in the system prompt (``ExecutionRequest.run_label``:
the arm, the skills' content, the task and the repeat). The simulated agent seeds from that
line and the task when the line is there, not from the whole system text: Claude Code's
system prompt holds its working folder (a new temporary folder every run) and the date, so a
seed over it gave other outputs, and other grades, every time the same command ran. A
request without the line (another client) is seeded from its whole system text, as before.
"""
from __future__ import annotations

import hashlib
import re

_RUN_LINE = re.compile(r"^Run: (\S+)$", re.M)


def run_seed(system: str, task: str) -> bytes:
    m = _RUN_LINE.search(system)
    basis = f"run:{m.group(1)}" if m else system
    return hashlib.sha256(f"{basis}|{task}".encode()).digest()
