"""Registers the ``draft_evals`` experiment through the public hook."""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_experiments(register) -> None:  # noqa: ANN001 - see hookspecs.Register
    from skilleval.evalsets.draft import draft_evals_factory

    register("draft_evals", draft_evals_factory,
             help="draft a trigger eval set (LLM, or the offline baseline on the stub)")
