"""Registers the optimiser's splitters, proposers and the ``trigger_opt`` experiment.

Proposers and the experiment are ``"module:attribute"`` factories, imported when a job builds
them: the optimiser's loop brings the store and pyarrow, which `--version`, `--help` and a
refused input never need.
"""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_splitters(register) -> None:  # noqa: ANN001 - see hookspecs.Register
    from skilleval.optimize import splitters as s

    register("stratified", s.StratifiedSplitter, params=s.StratifiedParams,
             help="train/validation/test 50/25/25 stratified by should_trigger, fixed seed (default)")
    register("holdout", s.HoldoutSplitter, params=s.HoldoutParams,
             help="two-way train/test (skill-creator's 60/40); selection falls back to train")
    register("none", s.NoSplitter, help="everything is train (no held-out number)")
    register("fixed", s.FixedSplitter, help="each case's own 'split' field (train/validation/test)")


@hookimpl
def register_proposers(register) -> None:  # noqa: ANN001
    from skilleval.optimize.params import LLMParams, StubProposerParams

    register("llm", "skilleval.optimize.proposers:LLMProposer", params=LLMParams,
             help="asks the job's backend for descriptions; validates and re-asks (default)")
    register("stub", "skilleval.optimize.proposers:StubProposer", params=StubProposerParams,
             help="offline deterministic heuristic rewrite from train failures")


@hookimpl
def register_experiments(register) -> None:  # noqa: ANN001
    register("trigger_opt", "skilleval.optimize.loop:trigger_opt_factory",
             help="optimise the description on train, select on validation, report test once")
