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

Control trials are content-addressed like any trial (backend identity, listing, bodies,
query, repeat) and stored in the ``controls`` table: a rerun of a finished run reads them
back and sends nothing, while a changed skill, listing or backend asks again. As with
trials, only valid outcomes are reused.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable

from skilleval.budget import call_bound
from skilleval.domain import Outcome, Skill, Trial, TrialResult, TriggerCase
from skilleval.errors import HarnessError
from skilleval.store import keys as keymod

REPEATS = 3
NEGATIVE_QUERY = "What is 17 + 25? Reply with the number only."


def positive_query(skill: Skill) -> str:
    first = skill.description.split(". ")[0].strip().rstrip(".")
    return f"Use the {skill.name} skill for this: {first}."


def _trials(skill: Skill, distractors: list[Skill], query: str, label: str,
            backend: Any) -> list[Trial]:
    installed = (skill, *distractors)
    listing = tuple(s.listed for s in installed if s.model_invocable)  # Claude Code's rules
    bodies = tuple((s.name, s.body) for s in installed)
    ident = keymod.identity_digest(backend.identity())
    ldigest = keymod.listing_digest(listing, bodies, [(s.name, s.install_extras) for s in installed])
    out = []
    for repeat in range(REPEATS):
        key = keymod.trial_key(ident, ldigest, skill.name, f"selfcheck|{label}|{query}", repeat)
        out.append(Trial(key, f"selfcheck-{label}", query, skill.name, listing, repeat,
                         backend.model, bodies, installed))
    return out


def _describe(results: list[TrialResult]) -> str:
    parts = []
    for r in results:
        what = r.outcome.value + (f" (fired {r.fired})" if r.fired else "")
        if r.error:
            what += f": {r.error[:160]}"
        parts.append(what)
    return "; ".join(parts)


def _valid_and_fired(runs: list[TrialResult]) -> tuple[list[TrialResult], int]:
    """A control's valid runs and how many of them fired: an error or a timeout is not
    "did not trigger", so it is in neither."""
    valid = [r for r in runs if r.outcome.valid]
    return valid, sum(1 for r in valid if r.outcome is Outcome.TRIGGERED)


def _all_errored(which: str, runs: list[TrialResult]) -> str:
    return (f"{which} control: every one of its {REPEATS} runs errored or timed out "
            f"({_describe(runs)}), so the harness could not be checked.")


async def _run(backend: Any, trial: Trial, budget: Any = None) -> TrialResult:
    """A control trial; a backend that raises is an error outcome here too (exit 3, not a crash).
    Control calls are paid like any other, so they go through the job's budget."""
    if budget is not None:
        await budget.areserve()
    cost, priced, bound = 0.0, False, None
    try:
        result = await backend.run_trial(trial)
        cost, priced = result.cost_usd, result.outcome.valid
        bound = call_bound(backend, result.input_tokens, result.output_tokens)
        return result
    except Exception as exc:  # noqa: BLE001
        return TrialResult(trial.key, Outcome.ERROR, error=f"{type(exc).__name__}: {exc}"[:300])
    finally:
        if budget is not None:
            budget.charge_usd(cost, priced=priced, bound_usd=bound)


Recorder = Callable[[Trial, TrialResult, TriggerCase, Skill], None]


async def self_check(backend: Any, skill: Skill, distractors: list[Skill], budget: Any = None,
                     *, store: Any = None, recorder: Recorder | None = None,
                     spent: Callable[[list[TrialResult]], None] | None = None) -> int:
    """Raise ``HarnessError`` (exit 3) explaining what is wrong, or return the number of
    control trials sent (0 when every one was read from `store`'s ``controls`` table).
    `spent` gets the results of the controls actually sent (real calls: counted and paid for)."""
    from skilleval.trigger.runner import load_valid

    pos = _trials(skill, distractors, positive_query(skill), "positive", backend)
    neg = _trials(skill, distractors, NEGATIVE_QUERY, "negative", backend)
    stored = load_valid(store, "controls", [t.key for t in pos + neg]) if store is not None else {}

    async def one(t: Trial) -> TrialResult:
        if t.key in stored:
            return stored[t.key]
        r = await _run(backend, t, budget)
        if recorder is not None:
            recorder(t, r, TriggerCase(t.case_id, t.query, t.case_id.endswith("positive")), skill)
        return r

    # Every control runs to its end before a budget stop is raised: a plain gather raised the
    # first stop and left the other controls' CLI processes half-spawned on the loop, and
    # closing the job then waited for them for ever (budget.max_calls=3 hung the run).
    outcome = await asyncio.gather(*(one(t) for t in pos + neg), return_exceptions=True)
    if spent is not None:  # only what was sent: stored controls cost nothing this time
        spent([r for t, r in zip(pos + neg, outcome) if t.key not in stored and isinstance(r, TrialResult)])
    stop = next((r for r in outcome if isinstance(r, BaseException)), None)
    if stop is not None:
        raise stop
    results: list[TrialResult] = list(outcome)  # type: ignore[arg-type]
    sent = sum(1 for t in pos + neg if t.key not in stored)
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
    # Each control is judged on its valid runs: an error or a timeout is not "did not
    # trigger". A control without one valid run cannot vouch for the harness, so it fails.
    measured = len(invalid) < len(results)
    pos_valid, fired = _valid_and_fired(pos_r)
    if measured and not pos_valid:
        problems.append(_all_errored("positive", pos_r))
    elif measured and fired * 2 <= len(pos_valid):
        problems.append(
            f"positive control: the explicit query {pos[0].query!r} triggered {skill.name!r} in "
            f"{fired}/{len(pos_valid)} valid runs ({_describe(pos_r)}). A harness that cannot see "
            "an explicitly requested skill would report ~0 % recall for every query.")
    neg_valid, false_fires = _valid_and_fired(neg_r)
    if measured and not neg_valid:
        problems.append(_all_errored("negative", neg_r))
    elif false_fires * 2 > len(neg_valid):
        problems.append(
            f"negative control: the neutral query {NEGATIVE_QUERY!r} triggered {skill.name!r} in "
            f"{false_fires}/{len(neg_valid)} valid runs. The harness is reporting triggers it "
            "should not (a substring match, or a skill forced by the system prompt?).")
    if problems:
        # one line: errors are printed on one line (a newline would show as a literal "\n")
        raise HarnessError("harness self-check failed, so no paid run was started: "
                           + " ".join(f"({i}) {p}" for i, p in enumerate(problems, 1))
                           + " (disable with trigger.self_check=false only if you know why)")
    return sent
