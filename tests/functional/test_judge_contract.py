"""A judge's answer is checked before it is counted: too few verdicts, the wrong type or a
``passed`` that is not a bool are judge errors (zipping verdicts with expectations silently
dropped the missing ones from the pass rate), extra verdicts are ignored and said once; and
whether a judge grades after a budget stop is its own ``deterministic`` attribute, not its
class name."""
from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from skilleval.errors import BudgetExhausted
from skilleval.functional import judges
from skilleval.functional.judges import JudgeInput, JudgeOutput, Verdict
from skilleval.functional.tasks import Expectation, TaskCase, load_evals

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"
EXPECTATIONS = (Expectation("one"), Expectation("two"), Expectation("three"))


class _Judge:
    samples = 1
    deterministic = True

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.name = f"walk_{mode}"

    def identity(self) -> dict:
        return {"judge": self.name}

    async def grade(self, item: JudgeInput):  # noqa: ANN201
        exps = item.expectations
        if self.mode == "short":
            return JudgeOutput([Verdict(exps[0].text, True, "only one")])
        if self.mode == "long":
            return JudgeOutput([Verdict(e.text, True, "ok") for e in exps] + [Verdict("x", False, "")] * 2)
        if self.mode == "list":
            return [Verdict(e.text, True, "x") for e in exps]
        if self.mode == "strpassed":
            return JudgeOutput([Verdict(e.text, "no", "string passed") for e in exps])
        raise AssertionError(self.mode)


def _graded(tmp_path: Path, judge, capsys):  # noqa: ANN001, ANN202
    import skilleval.functional.records  # noqa: F401
    from skilleval.backends.stub import StubBackend, StubParams
    from skilleval.execution import ArmSettings
    from skilleval.functional.arms import build_arms
    from skilleval.functional.runner import FunctionalRunner
    from skilleval.skills import load_skill
    from skilleval.store.catalog import Store
    from skilleval.store.schema import SCHEMA_VERSION

    skill = load_skill(CSV_TIDY)
    _, cases = load_evals(CSV_TIDY / "evals" / "evals.json")
    cases = [TaskCase(c.id, c.name, c.prompt, files=c.files, expectations=EXPECTATIONS) for c in cases[:1]]
    arms = build_arms(["with_skill", "without_skill"], skill, ArmSettings(model="sim-1"), load_skill=load_skill)
    store = Store(tmp_path / "store")
    job = SimpleNamespace(store=store, experiment="t", run_id="r1", budget=None,
                          backend=StubBackend(StubParams()), identity_row=lambda: {
                              "run_id": "r1", "sweep_id": "r1", "job_num": 0,
                              "experiment": "t", "schema_version": SCHEMA_VERSION})

    async def go() -> list:
        runner = FunctionalRunner(job, CSV_TIDY, judge, None)
        plan = runner.plan(cases, arms, 1, tmp_path / "sandbox")
        await runner.execute_all(plan)
        await runner.grade_all(plan)
        store.close()
        return plan
    plan = asyncio.run(go())
    assert len(plan) == 2 and all(r.valid for r in plan)
    return plan, capsys.readouterr().err


@pytest.mark.parametrize("mode, counts, says", [
    ("short", (1, 0, 2), "returned 1 verdict(s) for 3 expectations"),
    ("list", (0, 0, 3), "returned list, not a JudgeOutput"),
    ("strpassed", (0, 0, 3), "passed='no' (str)"),
])
def test_a_judge_answering_wrongly_gets_judge_errors(tmp_path: Path, capsys, mode, counts, says) -> None:  # noqa: ANN001
    plan, _ = _graded(tmp_path, _Judge(mode), capsys)
    for rec in plan:
        assert len(rec.verdicts) == 3  # every expectation is accounted for
        assert rec.counts == counts
        errors = [v.error for v in rec.verdicts if v.passed is None]
        assert errors and all(says in e for e in errors), errors


def test_extra_verdicts_are_ignored_and_said_once(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    plan, err = _graded(tmp_path, _Judge("long"), capsys)
    for rec in plan:
        assert rec.counts == (3, 0, 0)
    lines = [ln for ln in err.splitlines() if "walk_long" in ln]
    assert len(lines) == 1 and "2 more verdict(s) than the 3 expectation(s)" in lines[0], err


def test_deterministic_is_an_attribute_not_a_class_name() -> None:
    from skilleval.functional.runner import FunctionalRunner

    class CheckJudge:  # a third-party class that happens to share the built-in's name
        name, samples = "look_alike", 1

        def identity(self) -> dict:
            return {}

        async def grade(self, item):  # noqa: ANN001, ANN201
            return JudgeOutput([Verdict(e.text, True, "") for e in item.expectations])

    budget = SimpleNamespace(stopped="max_calls reached")
    job = SimpleNamespace(budget=budget)
    runner = FunctionalRunner.__new__(FunctionalRunner)
    runner.job, runner.model_backend, runner._sem, runner._warned = job, None, asyncio.Semaphore(1), set()
    case = TaskCase("1", "n", "p", expectations=(Expectation("e"),))
    rec = SimpleNamespace(case=case, request=SimpleNamespace(sandbox=Path("."), key="k", run_label="k"),
                          result=SimpleNamespace(transcript="", outputs=()))
    with pytest.raises(BudgetExhausted):  # asks a model, as far as anyone knows
        asyncio.run(runner._judge(CheckJudge(), rec, case.expectations))
    builtin = judges.CheckJudge("file_exists")
    assert builtin.deterministic is True
    out, _ = asyncio.run(runner._judge(builtin, rec, case.expectations))
    assert out.verdicts[0].passed is False  # graded (no such file), not stopped


def test_the_configured_judge_and_its_typed_default_are_separate_groups() -> None:
    """A judge chosen with judge.* params and the same judge named by a typed expectation
    (built with its defaults) share a name: grouped by name, both kinds were graded by
    whichever came first, so judge.* settings were ignored or misapplied."""
    from types import SimpleNamespace

    from skilleval.functional.runner import FunctionalRunner
    from skilleval.functional.tasks import Expectation, TaskCase

    class Size:
        name = "size"

        def __init__(self, min_bytes: int) -> None:
            self.min_bytes = min_bytes
    configured, default = Size(2), Size(100)
    runner = SimpleNamespace(main_judge=configured, judge_for_type=lambda t: default)
    case = TaskCase("1", "e", "p", expectations=(
        Expectation("typed", {"type": "size"}), Expectation("plain words")))
    groups = FunctionalRunner._groups(runner, case)
    assert {(g[0].min_bytes, tuple(i for i, _ in g[1])) for g in groups} == {(100, (0,)), (2, (1,))}
