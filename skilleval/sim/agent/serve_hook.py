"""Plugs the simulated executor agents (`agent.agent_turn` for the API executor's tools,
`cli_agent.cli_turn` for Claude Code's) into ``serve-sim``.

`skilleval.sim.responder` imports this module and asks its message hooks first; requests
without the executor marker fall through (the hook returns None).
"""
from __future__ import annotations

from typing import Any

from skilleval.sim.agent.agent import agent_turn
from skilleval.sim.agent.cli_agent import cli_turn
from skilleval.sim.responder import register_message_hook


def _hook(body: dict[str, Any], conversation: Any, seed: bytes) -> list[dict[str, Any]] | None:
    # Claude Code's tools (the claude_cli executor) first, then the API executor's own tools.
    return cli_turn(body, conversation) or agent_turn(body, seed)


register_message_hook(_hook)
