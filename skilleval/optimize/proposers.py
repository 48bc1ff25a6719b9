"""Proposers: write candidate descriptions from train failures (config group ``proposer``).

Protocol: a proposer is any object with::

    async def propose(self, request: ProposalRequest, *, backend, budget) -> list[Proposal]

It returns up to ``request.count`` *valid* proposals (see `validate_description`). The loop
checks that (`skilleval.optimize.proposal_checks`): an invalid or repeated proposal is dropped
and said, proposals beyond ``count`` are ignored, and an exception or an answer that is not a
list of `Proposal` stops the loop as the proposer failing (``proposer_failed``).

Optional attributes: ``makes_calls: bool = True`` (False: it never calls the backend, so the
call plan budgets 0 proposer calls; the built-in ``stub`` sets it), ``params.max_attempts``
(calls per candidate the plan assumes, default 1), ``calls_made`` / ``cost_usd`` (counted in
the run's spend) and ``reads_attribution`` (needed by ``optimize.attribution=true``).

A `ProposalRequest` holds the current description, the skill body, the train results (so the
failures with their trigger rates) and the history of earlier attempts with their *train*
scores. It has no field for validation or test data, so no proposer can see them: held-out
numbers stay honest by construction (``tests/optimize/test_proposers.py::
test_request_type_has_no_room_for_held_out_data`` and ``test_trigger_opt_cli.py::
test_validation_and_test_queries_never_reach_the_proposer`` check it).

Built-ins:

* ``llm``: asks the job's backend (``backend.complete``) with the prompt of
  `skilleval.optimize.prompts`, parses ``<new_description>`` and validates the answer,
  re-asking with the problem stated up to ``max_attempts`` times per candidate.
* ``stub``: an offline, deterministic heuristic (`skilleval.optimize.heuristic`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from skilleval import sample_key
from skilleval.budget import settled_on_error
from skilleval.errors import HarnessError

# The request types live in `proposal` (the prompt module needs them too); re-exported here.
from skilleval.optimize.proposal import (MAX_CHARS, Attempt, ProposalRequest,  # noqa: F401
                                         QueryScore, normalise)
from skilleval.optimize.params import LLMParams, StubProposerParams
from skilleval.textfiles import surrogate_problem


@dataclass
class Proposal:
    description: str
    proposer: str
    attempts: int = 1
    calls: int = 0
    cost_usd: float = 0.0
    rejected: list[str] = field(default_factory=list)  # why earlier answers were refused
    log: dict[str, Any] = field(default_factory=dict)  # prompt/response, skill-creator style


class Proposer(Protocol):
    name: str

    async def propose(self, request: ProposalRequest, *, backend: Any,
                      budget: Any = None) -> list[Proposal]: ...


def validate_description(text: str, max_chars: int = MAX_CHARS) -> str | None:
    """None when `text` is a usable description, else the problem in one line.

    Rules: non-empty, at most `max_chars` characters, no ``<`` or ``>`` (skill-creator's
    quick_validate rejects them), and YAML-safe: a frontmatter holding it dumps and loads
    back to the same string.
    """
    if not text or not text.strip():
        return "the description is empty"
    unencodable = surrogate_problem(text)
    if unencodable:
        return f"the description {unencodable}"
    if len(text) > max_chars:
        return f"the description is {len(text)} characters; the limit is {max_chars}"
    if "<" in text or ">" in text:
        return "the description contains '<' or '>', which SKILL.md validation rejects"
    try:
        dumped = yaml.safe_dump({"name": "x", "description": text}, sort_keys=False,
                                allow_unicode=True, width=10_000)
        back = yaml.safe_load(dumped)
    except yaml.YAMLError as exc:  # pragma: no cover - safe_dump quotes what it must
        return f"the description is not YAML-safe: {exc}"
    if not isinstance(back, dict) or back.get("description") != text:
        return "the description does not survive a YAML round trip"
    if any(ord(ch) < 32 for ch in text):
        return "the description contains control characters"
    return None


# -- llm ------------------------------------------------------------------------------------


class LLMProposer:
    """Ask a text-completion backend for each candidate; validate and re-ask on a bad answer."""

    name = "llm"
    makes_calls = True  # budgeted: candidates x max_attempts backend calls per iteration
    reads_attribution = True  # its prompt carries `request.attribution` (optimize.attribution)

    def __init__(self, params: LLMParams) -> None:
        self.params = params
        self.calls_made = 0
        self.cost_usd = 0.0

    async def propose(self, request: ProposalRequest, *, backend: Any,
                      budget: Any = None) -> list[Proposal]:
        from skilleval.optimize import prompts

        out: list[Proposal] = []
        seen = request.tried()
        for variant in range(request.count):
            base = prompts.build_prompt(request, variant=variant, max_chars=self.params.max_chars)
            prompt = base
            prop = Proposal("", self.name, attempts=0)
            for attempt in range(1, self.params.max_attempts + 1):
                if budget is not None:
                    budget.reserve(1)
                self.calls_made += 1  # counted once sent: a request that fails is a call too
                prop.calls += 1
                # keyed: a simulator answers this (prompt, variant, attempt) the same way on every
                # run, not by how many times its server was asked it (skilleval.sample_key)
                with sample_key.keyed(f"propose|{variant}|{attempt}"):
                    completion = await settled_on_error(
                        backend.complete(prompt, max_tokens=self.params.max_tokens), budget)
                if budget is not None:
                    budget.charge_usd(completion.cost_usd)
                self.cost_usd += completion.cost_usd
                prop.attempts = attempt
                prop.cost_usd += completion.cost_usd
                parsed = prompts.parse_response(completion.text)
                text = normalise(completion.text) if parsed is None else parsed
                problem = ("the reply has no <new_description></new_description> block" if parsed is None
                           else validate_description(text, self.params.max_chars))
                if problem is None and (text in seen):
                    problem = "the description repeats an earlier attempt; write a different one"
                prop.log.setdefault("attempts", []).append(
                    {"prompt": prompt, "response": completion.text, "parsed_description": text,
                     "char_count": len(text), "problem": problem})
                if problem is None:
                    prop.description = text
                    break
                prop.rejected.append(problem)
                prompt = prompts.build_retry_prompt(base, text, problem, self.params.max_chars)
            if prop.description:
                seen.add(prop.description)
                out.append(prop)
        if not out and request.count > 0:
            problems = "; ".join(p for p in prop.rejected[-1:]) or "no answer"
            raise HarnessError(f"proposer=llm produced no valid description after "
                               f"{self.params.max_attempts} attempts per candidate ({problems})")
        return out


# -- stub -----------------------------------------------------------------------------------


class StubProposer:
    """A deterministic *heuristic*, not a model: see `skilleval.optimize.heuristic`.

    It writes a description from the skill body's own summary, adds the vocabulary that
    missed train positives share with the skill (in general phrasing, never the queries
    themselves), and states the themes of false triggers as out of scope ("Not for ...").
    Candidate k of a batch varies how much it adds. It makes no backend calls.
    """

    name = "stub"
    makes_calls = False  # budgeted at 0 calls

    def __init__(self, params: StubProposerParams) -> None:
        self.params = params
        self.calls_made = 0
        self.cost_usd = 0.0

    async def propose(self, request: ProposalRequest, *, backend: Any = None,
                      budget: Any = None) -> list[Proposal]:
        from skilleval.optimize import heuristic

        out: list[Proposal] = []
        seen = request.tried()
        for variant in range(request.count * 3):  # a few spare variants for duplicates
            if len(out) >= request.count:
                break
            text = heuristic.rewrite(heuristic.Inputs.from_request(request), variant,
                                     max_chars=self.params.max_chars)
            if validate_description(text, self.params.max_chars) is None and text not in seen:
                seen.add(text)
                out.append(Proposal(text, self.name, calls=0))
        return out
