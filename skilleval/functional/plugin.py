"""Registers functional-eval judges and experiments through the public hooks.

Factories are "module:attribute" strings the registry imports on first use, so
`skilleval --help` and every other command stay fast (nothing here imports scipy, rich tables or the executors at start-up).
"""
from __future__ import annotations

from typing import Any

from skilleval.hookspecs import hookimpl


@hookimpl
def register_judges(register) -> None:  # noqa: ANN001 - see hookspecs.Register
    from skilleval.functional.params import CheckParams, LlmGraderParams

    register("llm_grader", "skilleval.functional.grader:LlmGrader", params=LlmGraderParams,
             help="skill-creator's grader contract via the backend (passed + evidence, claims, "
                  "eval feedback); judge.samples=k reports agreement")
    for name, text in (("file_exists", "typed check: {type: file_exists, path}"),
                       ("contains", "typed check: {type: contains, path, text}"),
                       ("regex", "typed check: {type: regex, path, pattern} (multiline search)"),
                       ("json_path", "typed check: {type: json_path, path, query, equals}")):
        register(name, _check(name), params=CheckParams, help=text)


def _check(name: str) -> Any:
    def factory(params: Any) -> Any:
        from skilleval.functional.judges import CheckJudge

        return CheckJudge(name)
    return factory


@hookimpl
def register_experiments(register) -> None:  # noqa: ANN001
    register("functional_eval", "skilleval.functional.experiment:functional_eval_factory",
             help="with/without-skill executions, judges, benchmark.json with delta and interval")
    register("compare", "skilleval.functional.comparator:compare_factory",
             help="blind A/B comparison of two arms in both orders, then an unblinded analysis")
