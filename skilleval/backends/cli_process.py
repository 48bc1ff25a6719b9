"""Process plumbing shared by the CLI trial path (`claude_cli`) and the CLI executor."""
from __future__ import annotations

import asyncio
import json
import os
import signal

_ISOLATION = {"enabledPlugins": {"cc-plugin-plugin-authoring@builtin": False}}
# The builtin plugin skill is disabled so only the skills under test are listed.
ISOLATION_SETTINGS = json.dumps(_ISOLATION)

# Trigger trials only: a PreToolUse hook on the Skill tool answers ``continue: false``, so
# the CLI stops at the decision by itself, before running the skill and before a second API
# call. Killing the process when the decision shows up on stdout is not enough under CPU
# load: the CLI may already have sent the next request by the time the kill lands (seen: 1
# and 6 of 60 trials at 8 in flight on 2 cores). Verified on 2.1.332: one request per trial,
# ``terminal_reason: hook_stopped``.
TRIAL_SETTINGS = json.dumps({**_ISOLATION, "hooks": {"PreToolUse": [{
    "matcher": "Skill",
    "hooks": [{"type": "command", "command": "echo '{\"continue\": false, \"stopReason\": \"skilleval: decided\"}'"}],
}]}})


def usable_cpus() -> int:
    """CPUs this process may run on (the affinity mask, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


async def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group (the CLI and anything it started) and reap the child."""
    signal_group(proc)
    await reap(proc)


def signal_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group (the CLI and anything it started); does not wait."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def reap(proc: asyncio.subprocess.Process) -> None:
    """Wait (up to 10 s) for a signalled child to exit."""
    try:
        await asyncio.wait_for(proc.wait(), 10)
    except asyncio.TimeoutError:
        pass
