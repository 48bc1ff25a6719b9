from __future__ import annotations

import asyncio
import dataclasses

import pytest

from skilleval.backends.stub import StubBackend, StubParams
from skilleval.budget import Budget
from skilleval.domain import Completion
from skilleval.errors import BudgetExhausted, HarnessError
from skilleval.optimize import prompts
from skilleval.sim import proposer_responder
from skilleval.optimize.proposers import (LLMParams, LLMProposer, ProposalRequest, QueryScore,
                                          StubProposer, StubProposerParams, validate_description)
from skilleval.skills import load_skill

from opt_helpers import EXAMPLE

TRAIN = (
    QueryScore("write up release notes for the 1.4.0 tag from the merged PRs", True, 0, 3, False),
    QueryScore("update CHANGELOG.md with what changed since the last release", True, 1, 3, False),
    QueryScore("summarise merged PRs since the v2 tag for the changelog", True, 3, 3, True),
    QueryScore("write a commit message for my staged changes", False, 2, 3, False),
    QueryScore("explain how git rebase works", False, 0, 3, True),
)


def request(count: int = 3) -> ProposalRequest:
    skill = load_skill(EXAMPLE)
    return ProposalRequest(skill.name, skill.body, skill.description, TRAIN, (), 1, count)


class ScriptedBackend:
    """A text-completion backend that answers from a script (a test double of the protocol)."""

    name, model = "scripted", "scripted-1"

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    async def complete(self, prompt: str, *, system=None, max_tokens: int = 2048) -> Completion:
        self.prompts.append(prompt)
        return Completion(self.answers.pop(0) if self.answers else "", 10, 10, 0.001)


@pytest.mark.parametrize("text,problem", [
    ("", "empty"), ("x" * 1025, "1025 characters"), ("Use for <xml> files.", "'<' or '>'"),
])
def test_validation_rejects(text, problem):
    assert problem in validate_description(text)


@pytest.mark.parametrize("text", [
    "Use this skill for: changelogs, release notes & 'NEWS' files - # not a comment",
    'He said "yes": ok', "- starts like a YAML list", "null", "x" * 1024,
])
def test_validation_accepts_yaml_sensitive_text(text):
    assert validate_description(text) is None


def test_llm_proposer_reasks_until_valid_and_states_the_problem():
    good = "Write changelog entries and release notes from git history. Not for commit messages."
    backend = ScriptedBackend(["no tags here <oops>", "<new_description>" + "y" * 2000 + "</new_description>",
                               f"<new_description>\n\"{good}\"\n</new_description>"])
    props = asyncio.run(LLMProposer(LLMParams(max_attempts=3)).propose(request(1), backend=backend))
    assert [p.description for p in props] == [good]
    assert props[0].attempts == 3 and props[0].calls == 3
    assert "no <new_description>" in props[0].rejected[0] and "2000 characters" in props[0].rejected[1]
    assert "was rejected: the description is 2000 characters" in backend.prompts[2]


def test_llm_proposer_gives_up_after_max_attempts():
    backend = ScriptedBackend(["<new_description></new_description>"] * 5)
    with pytest.raises(HarnessError, match="no valid description after 2 attempts"):
        asyncio.run(LLMProposer(LLMParams(max_attempts=2)).propose(request(1), backend=backend))
    assert len(backend.prompts) == 2


def test_llm_proposer_charges_the_budget():
    backend = ScriptedBackend(["<new_description>A fine description.</new_description>"])
    with pytest.raises(BudgetExhausted):
        asyncio.run(LLMProposer(LLMParams()).propose(request(2), backend=backend,
                                                      budget=Budget(max_calls=1)))


def test_llm_proposer_on_the_simulator_gives_distinct_valid_candidates():
    props = asyncio.run(LLMProposer(LLMParams()).propose(request(3), backend=StubBackend(StubParams())))
    descs = [p.description for p in props]
    assert len(descs) == 3 and len(set(descs)) == 3
    for d in descs:
        assert validate_description(d) is None
        assert "changelog" in d.lower()
        for q in TRAIN:  # generalised, not a list of the queries
            assert q.query.lower() not in d.lower()
    assert "Not for" in descs[0]  # the false trigger is stated as out of scope


def test_prompt_carries_failures_history_and_format():
    p = prompts.build_prompt(request(2), variant=1)
    assert "FAILED TO TRIGGER" in p and "FALSE TRIGGERS" in p and "(triggered 0/3 times)" in p
    assert "<new_description>" in p and "candidate 2 of 2" in p and "1024 characters" in p
    inputs, variant, limit = proposer_responder.read_prompt(p)
    assert variant == 1 and limit == 1024 and len(inputs.results) == len(TRAIN)


def test_stub_proposer_is_deterministic_and_offline():
    a = asyncio.run(StubProposer(StubProposerParams()).propose(request(3)))
    b = asyncio.run(StubProposer(StubProposerParams()).propose(request(3)))
    assert [p.description for p in a] == [p.description for p in b]
    assert len(a) == 3 and all(p.calls == 0 for p in a)
    assert "heuristic" in (StubProposer.__doc__ or "")


def test_request_type_has_no_room_for_held_out_data():
    names = {f.name for f in dataclasses.fields(ProposalRequest)}
    assert not any(word in n for n in names for word in ("valid", "test", "holdout", "dev"))


class FailingBackend:
    """A backend whose every request fails after it was sent (an HTTP 500 once retries are
    spent), as the anthropic SDK raises it."""

    name, model = "failing", "failing-1"

    def __init__(self) -> None:
        self.sent = 0

    async def complete(self, prompt: str, *, system=None, max_tokens: int = 2048) -> Completion:
        self.sent += 1
        raise RuntimeError("Error code: 500 - api_error")


def test_a_failed_proposer_request_is_a_call_and_frees_its_budget_booking():
    """A proposer request that failed was not counted: trigger_opt's "backend calls" line left
    it out, and its budget reservation stayed "in flight" for the rest of the run."""
    backend, budget = FailingBackend(), Budget(max_calls=10, max_usd=1.0)
    proposer = LLMProposer(LLMParams(max_attempts=3))
    with pytest.raises(RuntimeError, match="500"):
        asyncio.run(proposer.propose(request(1), backend=backend, budget=budget))
    assert backend.sent == 1 and proposer.calls_made == 1 and proposer.cost_usd == 0.0
    assert budget.calls == 1 and budget.in_flight == 0 and budget.per_call_usd is None


def test_a_failed_drafter_request_is_a_call_and_frees_its_budget_booking():
    from skilleval.budget import MeteredBackend
    from skilleval.evalsets.llm import draft_llm

    backend, budget = FailingBackend(), Budget(max_calls=10)
    with pytest.raises(RuntimeError, match="500"):
        asyncio.run(draft_llm(load_skill(EXAMPLE), [], 4, 2, backend, budget=budget))
    assert backend.sent == 1 and budget.calls == 1 and budget.in_flight == 0
    meter = MeteredBackend(FailingBackend(), budget)  # what judges and comparators are handed
    with pytest.raises(RuntimeError, match="500"):
        asyncio.run(meter.complete("grade this"))
    assert meter.calls == 1 and budget.calls == 2 and budget.in_flight == 0
