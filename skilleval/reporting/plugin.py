"""Registers the built-in reporters through the public hook.

Factories are ``"module:attribute"`` strings, imported when a job builds the reporter;
registration imports only their params (`skilleval.reporting.params`).
"""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_reporters(register) -> None:  # noqa: ANN001
    from skilleval.reporting.params import ConsoleParams, JsonParams, JunitParams, MarkdownParams

    register("console", "skilleval.reporting.trigger:ConsoleReporter", params=ConsoleParams,
             help="rich tables on stdout")
    register("json", "skilleval.reporting.trigger:JsonReporter", params=JsonParams,
             help="results.json in skill-creator's run_eval shape, plus metrics")
    register("junit", "skilleval.reporting.junit:JunitReporter", params=JunitParams,
             help="junit.xml: one testcase per query (trigger) or per eval and arm (functional)")
    register("markdown", "skilleval.reporting.markdown:MarkdownReporter",
             params=MarkdownParams,
             help="summary.md, also appended to $GITHUB_STEP_SUMMARY when set")
