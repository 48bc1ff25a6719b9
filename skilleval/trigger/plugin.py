"""Registers the trigger_eval experiment through the public hook.

Factories are ``"module:attribute"`` strings, imported when a job builds the experiment, so
registering them (every CLI start, `--version` and `--help` too) imports none of the runner,
the store or pyarrow.
"""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_experiments(register) -> None:  # noqa: ANN001
    register("trigger_eval", "skilleval.trigger.experiment:trigger_eval_factory",
             help="precision/recall/accuracy of a skill's description over repeated runs")
    register("routing", "skilleval.trigger.routing:routing_factory",
             help="which of N listed skills fires per query: confusion matrix, per-skill P/R")
    register("attribute", "skilleval.trigger.attribute:attribute_factory",
             help="which description sentence earns triggers / causes false ones (LOO, Shapley)")
