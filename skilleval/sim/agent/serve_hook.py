"""Plugs the simulated executor agent (`skilleval.sim.agent.agent.agent_turn`) into ``serve-sim``.

`skilleval.sim.responder` imports this module and asks its message hooks first; requests
without the executor marker fall through (the hook returns None).
"""
from __future__ import annotations

from typing import Any

from skilleval.sim.agent.agent import agent_turn
from skilleval.sim.responder import register_message_hook


def _hook(body: dict[str, Any], conversation: Any, seed: bytes) -> list[dict[str, Any]] | None:
    return agent_turn(body, seed)


register_message_hook(_hook)
