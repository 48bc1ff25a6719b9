"""Registers the ``draft_evals`` experiment through the public hook (a ``"module:attribute"``
factory: the drafter and its similarity code are imported when a job builds it)."""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_experiments(register) -> None:  # noqa: ANN001 - see hookspecs.Register
    register("draft_evals", "skilleval.evalsets.draft:draft_evals_factory",
             help="draft a trigger eval set (LLM, or the offline baseline on the stub)")
