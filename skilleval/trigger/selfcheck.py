"""Harness self-check: prove the harness can measure before a paid run reports 0 % recall.

skill-creator's CLI harness reported ~0 % recall for everyone (``skill-creator.md`` §13): the
skill was installed as a mangled slash command, clones confused the model, errors were
scored as misses. Three controls catch that class of bug here, each asked ``REPEATS`` times:

1. **shown**: the backend reports what the model was shown (CLI ``init.skills``, the API
   backend's own listing); the skill under test must be in it;
2. **positive control**: an explicit "use the <name> skill" query must trigger it in a
   majority of runs;
3. **negative control**: a neutral arithmetic question must not trigger it in a majority.

Errors and timeouts are reported as such: a control that cannot be measured fails too.
"""
from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from skilleval.domain import Outcome, Skill, Trial, TrialResult
from skilleval.errors import HarnessError

REPEATS = 3
NEGATIVE_QUERY = "What is 17 + 25? Reply with the number only."


def positive_query(skill: Skill) -> str:
    first = skill.description.split(". ")[0].strip().rstrip(".")
    return f"Use the {skill.name} skill for this: {first}."


def _trials(skill: Skill, distractors: list[Skill], query: str, label: str,
            model: str) -> list[Trial]:
    installed = (skill, *distractors)
    listing = tuple(s.listed for s in installed if s.model_invocable)  # Claude Code's rules
    bodies = tuple((s.name, s.body) for s in installed)
    out = []
    for repeat in range(REPEATS):
        key = hashlib.sha256(f"selfcheck|{label}|{skill.content_hash}|{skill.install_extras}|"
                             f"{query}|{repeat}".encode()).hexdigest()[:32]
        out.append(Trial(key, f"selfcheck-{label}", query, skill.name, listing, repeat, model, bodies,
                         installed))
    return out


def _describe(results: list[TrialResult]) -> str:
    parts = []
    for r in results:
        what = r.outcome.value + (f" (fired {r.fired})" if r.fired else "")
        if r.error:
            what += f": {r.error[:160]}"
        parts.append(what)
    return "; ".join(parts)


async def _run(backend: Any, trial: Trial) -> TrialResult:
    """A control trial; a backend that raises is an error outcome here too (exit 3, not a crash)."""
    try:
        return await backend.run_trial(trial)
    except Exception as exc:  # noqa: BLE001
        return TrialResult(trial.key, Outcome.ERROR, error=f"{type(exc).__name__}: {exc}"[:300])


async def self_check(backend: Any, skill: Skill, distractors: list[Skill]) -> None:
    """Raise ``HarnessError`` (exit 3) explaining what is wrong, or return None."""
    pos = _trials(skill, distractors, positive_query(skill), "positive", backend.model)
    neg = _trials(skill, distractors, NEGATIVE_QUERY, "negative", backend.model)
    results = await asyncio.gather(*(_run(backend, t) for t in pos + neg))
    pos_r, neg_r = list(results[:REPEATS]), list(results[REPEATS:])
    problems: list[str] = []
    if not skill.model_invocable:
        problems.append(
            f"{skill.name!r} sets disable-model-invocation: true, so Claude Code keeps it out of "
            "the model's listing and the model can never trigger it; there is nothing to measure.")
    invalid = [r for r in results if not r.outcome.valid]
    if len(invalid) == len(results):
        problems.append(
            "every control trial failed, so nothing can be measured: " + _describe(invalid[:2])
            + ". Check the API key / login, backend.base_url, backend.model and the network.")
    shown_sets = [r.shown for r in results if r.shown is not None]
    if shown_sets and not any(skill.name in s for s in shown_sets):
        problems.append(
            f"the skill {skill.name!r} was not in what the model was shown "
            f"(shown: {', '.join(shown_sets[0]) or 'nothing'}). The harness did not install or "
            "list it: check the skill folder name, its frontmatter (disable-model-invocation?), "
            "and backend.extra_args (e.g. --disallowedTools Skill removes the listing).")
    fired = sum(1 for r in pos_r if r.outcome is Outcome.TRIGGERED)
    if len(invalid) < len(results) and fired * 2 <= REPEATS:
        problems.append(
            f"positive control: the explicit query {pos[0].query!r} triggered {skill.name!r} in "
            f"{fired}/{REPEATS} runs ({_describe(pos_r)}). A harness that cannot see an "
            "explicitly requested skill would report ~0 % recall for every query.")
    false_fires = sum(1 for r in neg_r if r.outcome is Outcome.TRIGGERED)
    if false_fires * 2 > REPEATS:
        problems.append(
            f"negative control: the neutral query {NEGATIVE_QUERY!r} triggered {skill.name!r} in "
            f"{false_fires}/{REPEATS} runs. The harness is reporting triggers it should not "
            "(a substring match, or a skill forced by the system prompt?).")
    if problems:
        raise HarnessError("harness self-check failed, so no paid run was started:\n  - "
                           + "\n  - ".join(problems)
                           + "\n(disable with trigger.self_check=false only if you know why)")
