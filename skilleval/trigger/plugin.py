"""Registers the trigger_eval experiment through the public hook."""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_experiments(register) -> None:  # noqa: ANN001
    from skilleval.trigger.experiment import trigger_eval_factory

    register("trigger_eval", trigger_eval_factory,
             help="precision/recall/accuracy of a skill's description over repeated runs")
    register("routing", "skilleval.trigger.routing:routing_factory",
             help="which of N listed skills fires per query: confusion matrix, per-skill P/R")
    register("attribute", "skilleval.trigger.attribute:attribute_factory",
             help="which description sentence earns triggers / causes false ones (LOO, Shapley)")
