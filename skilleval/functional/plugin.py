"""Registers functional-eval judges and experiments through the public hooks."""
from __future__ import annotations

from skilleval.hookspecs import hookimpl


@hookimpl
def register_judges(register) -> None:  # noqa: ANN001 - see hookspecs.Register
    from skilleval.functional.grader import LlmGrader, LlmGraderParams
    from skilleval.functional.judges import CheckParams, check_factory

    register("llm_grader", LlmGrader, params=LlmGraderParams,
             help="skill-creator's grader contract via the backend (passed + evidence, claims, "
                  "eval feedback); judge.samples=k reports agreement")
    for name, text in (("file_exists", "typed check: {type: file_exists, path}"),
                       ("contains", "typed check: {type: contains, path, text}"),
                       ("regex", "typed check: {type: regex, path, pattern} (multiline search)"),
                       ("json_path", "typed check: {type: json_path, path, query, equals}")):
        register(name, check_factory(name), params=CheckParams, help=text)


@hookimpl
def register_experiments(register) -> None:  # noqa: ANN001
    from skilleval.functional.comparator import compare_factory
    from skilleval.functional.experiment import functional_eval_factory

    register("functional_eval", functional_eval_factory,
             help="with/without-skill executions, judges, benchmark.json with delta and interval")
    register("compare", compare_factory,
             help="blind A/B comparison of two arms in both orders, then an unblinded analysis")
