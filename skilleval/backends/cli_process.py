"""Process plumbing shared by the CLI trial path (`claude_cli`) and the CLI executor."""
from __future__ import annotations

import asyncio
import json
import os
import signal

# The builtin plugin skill is disabled so only the skills under test are listed.
ISOLATION_SETTINGS = json.dumps({"enabledPlugins": {"cc-plugin-plugin-authoring@builtin": False}})


async def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group (the CLI and anything it started) and reap the child."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        await asyncio.wait_for(proc.wait(), 10)
    except asyncio.TimeoutError:
        pass
