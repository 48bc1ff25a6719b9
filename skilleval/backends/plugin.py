"""Registers the built-in backends through the public hook, exactly as a third-party plugin does."""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_backends(register) -> None:  # noqa: ANN001 - see hookspecs.Register
    from skilleval.backends.stub import StubBackend, StubParams

    register("stub", StubBackend, params=StubParams,
             help="offline simulated model (lexical relevance + seeded draws); the default")
    from skilleval.backends.anthropic_api import AnthropicApiBackend, AnthropicApiParams
    from skilleval.backends.claude_cli import ClaudeCliBackend, ClaudeCliParams

    register("claude_cli", ClaudeCliBackend, params=ClaudeCliParams,
             help="the real `claude -p` (Claude Code) in an isolated temp project per trial")
    register("anthropic_api", AnthropicApiBackend, params=AnthropicApiParams,
             help="the Messages API via the anthropic SDK, with the CLI's Skill tool and listing")
