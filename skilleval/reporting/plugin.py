"""Registers the built-in reporters through the public hook."""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_reporters(register) -> None:  # noqa: ANN001
    from skilleval.reporting.params import JunitParams, MarkdownParams
    from skilleval.reporting.trigger import ConsoleParams, ConsoleReporter, JsonParams, JsonReporter

    register("console", ConsoleReporter, params=ConsoleParams, help="rich tables on stdout")
    register("json", JsonReporter, params=JsonParams,
             help="results.json in skill-creator's run_eval shape, plus metrics")
    register("junit", "skilleval.reporting.junit:JunitReporter", params=JunitParams,
             help="junit.xml: one testcase per query (trigger) or per eval and arm (functional)")
    register("markdown", "skilleval.reporting.markdown:MarkdownReporter",
             params=MarkdownParams,
             help="summary.md, also appended to $GITHUB_STEP_SUMMARY when set")

