"""A backend whose run_trial answers with the wrong type (a plugin's bug: a dict, a string
outcome) is an error outcome for that trial, never a traceback that ends the run and never a
"not triggered"."""
from __future__ import annotations

import asyncio
from typing import Any

from skilleval.backends.base import BaseBackend
from skilleval.domain import Skill, Trial, TriggerCase
from skilleval.trigger.policies import TriggerSettings
from skilleval.trigger.runner import TrialRunner


class WrongAnswers(BaseBackend):
    name = "wrong-answers"
    model = "m"

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def run_trial(self, trial: Trial) -> Any:
        return self.answer


def test_a_wrong_answer_is_an_error_outcome(tmp_path) -> None:  # noqa: ANN001
    skill_dir = tmp_path / "s"
    skill_dir.mkdir()
    (skill_dir / "SKILL.md").write_text("---\nname: s\ndescription: Tidy CSV files.\n---\nbody\n")
    from skilleval.skills import load_skill

    skill: Skill = load_skill(skill_dir)
    cases = [TriggerCase("q1", "tidy my csv", True), TriggerCase("q2", "write a poem", False)]
    for answer in ({"outcome": "triggered"}, "triggered"):
        runner = TrialRunner(WrongAnswers(answer), settings=TriggerSettings(runs=1), store=None)
        results = asyncio.run(runner.evaluate(skill, cases))
        assert [(q.errors, q.valid_runs, q.passed) for q in results] == [(1, 0, None), (1, 0, None)]
