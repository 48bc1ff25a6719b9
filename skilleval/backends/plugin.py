"""Registers the built-in backends through the public hook, exactly as a third-party plugin does."""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_backends(register) -> None:  # noqa: ANN001 - see hookspecs.Register
    from skilleval.backends.stub import StubBackend, StubParams

    register("stub", StubBackend, params=StubParams,
             help="offline simulated model (lexical relevance + seeded draws); the default")
