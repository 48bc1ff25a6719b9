"""The ``llm`` proposer's prompt, its parser, and the simulator's responder for it.

The prompt follows skill-creator's ``improve_description.py`` (reference §6.2): framing, the
current description, the train score with the failures (missed triggers and false triggers,
with their rates), earlier attempts with their *train* scores, the skill content, guidance
(generalise to intents, do not list queries, 100-200 words, hard character limit) and the
answer format ``<new_description>...</new_description>``. Queries are written as JSON strings
so multi-line queries stay on one line.

With ``optimize.attribution=true`` the prompt also carries the sentence-attribution table of
the current description (`_attribution_lines`). Its sentences come from the user's skill and
earlier model answers, so they are hostile text: each is a JSON string with ``<``, ``>`` and
``&`` written as ``\\u003c``-style escapes, so no sentence can close the table's tag or open
another one, and every row stays on one line.

The simulator answers this prompt from what it says and nothing else
(``skilleval.sim.proposer_responder``).
"""
from __future__ import annotations

import json
import re

from skilleval.optimize.proposal import (MAX_CHARS, Effect, ProposalRequest, QueryScore,
                                         normalise)
from skilleval.task_marker import task_marker

TASK = "improve-description"

_STYLES = [
    "Lead with what the skill does, then the situations it is for.",
    "Lead with the user intents it covers, phrased the way people ask, then what it is not for.",
    "Keep it short and dense: the core job and the key words users say.",
    "Try a structurally different shape from every earlier attempt.",
]


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _tag_safe(text: str) -> str:
    """A JSON string that cannot end or open a tag of the prompt (see the module docstring)."""
    out = json.dumps(text, ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        out = out.replace(ch, esc)
    return out


def _effect(e: Effect) -> str:
    if e.value is None:
        return "n/a (no query measured)"
    if e.low is None or e.high is None:
        return f"{e.value:+.2f} (no interval) over {e.queries} queries"
    return f"{e.value:+.2f} [{e.low:+.2f}, {e.high:+.2f}] over {e.queries} queries"


def _attribution_lines(request: ProposalRequest) -> list[str]:
    if not request.attribution:
        return []
    lines = [
        "",
        "What each sentence of the current description does on the train queries (leave-one-out: "
        "the change in a query's trigger rate when the sentence is kept rather than removed, "
        f"mean over queries with a {request.confidence:.0%} paired interval). A positive recall "
        "effect means the sentence earns triggers; a positive false-trigger effect means it causes "
        "false ones. Sentences are JSON strings.",
        "<sentence_attribution>",
    ]
    for s in request.attribution:
        lines.append(f"  sentence {s.index + 1}: {_tag_safe(s.sentence)} | recall "
                     f"{_effect(s.recall)} | false-trigger rate {_effect(s.false_trigger_rate)}")
    lines.append("</sentence_attribution>")
    return lines


def _result_line(r: QueryScore) -> str:
    mark = "PASS" if r.passed else "FAIL"
    expected = "should trigger" if r.should_trigger else "should not trigger"
    return f"[{mark}] {_q(r.query)} ({expected}; triggered {r.triggers}/{r.runs})"


def build_prompt(request: ProposalRequest, *, variant: int = 0, max_chars: int = MAX_CHARS) -> str:
    """The full user message for candidate `variant` (0-based) of `request.count`."""
    total = len(request.train_results)
    lines = [
        task_marker(TASK),
        f'You are optimizing the description of a Claude Code skill called "{request.skill_name}". '
        "A skill is a folder of instructions that Claude loads only when it decides the skill is "
        "relevant (progressive disclosure). Claude sees just the name and the description in its "
        "available_skills list, and decides from those alone whether to use the skill for a "
        "user's request.",
        "",
        f'<current_description>\n"{request.current_description}"\n</current_description>',
        "",
        f"Current scores (Train: {request.train_passed}/{total}):",
        "<scores_summary>",
    ]
    missed, false = request.missed, request.false_triggers
    if missed:
        lines.append("FAILED TO TRIGGER (should have used the skill, did not often enough):")
        lines += [f"  - {_q(r.query)} (triggered {r.triggers}/{r.runs} times)" for r in missed]
    if false:
        lines.append("FALSE TRIGGERS (used the skill but should not have):")
        lines += [f"  - {_q(r.query)} (triggered {r.triggers}/{r.runs} times)" for r in false]
    lines.append("")
    lines.append("PREVIOUS ATTEMPTS (do not repeat these; try something structurally different "
                 "if they keep failing). Each shows every train query's result:")
    for a in request.history:
        lines.append(f"<attempt iteration={a.iteration} train={a.train_passed}/{a.train_total}>")
        lines.append(f"Description: {_q(a.description)}")
        lines += [f"  {_result_line(r)}" for r in a.results]
        lines.append("</attempt>")
    lines.append(f"<attempt current train={request.train_passed}/{total}>")
    lines.append(f"Description: {_q(request.current_description)}")
    lines += [f"  {_result_line(r)}" for r in request.train_results]
    lines.append("</attempt>")
    lines.append("</scores_summary>")
    lines += _attribution_lines(request)
    lines += [
        "",
        "Here is the skill itself:",
        "<skill_content>",
        f"---\nname: {request.skill_name}\ndescription: {_q(request.current_description)}\n---",
        request.skill_body.strip(),
        "</skill_content>",
        "",
        "Write a new description that makes Claude use this skill for the requests it is for and "
        "not for the others. Generalise from the failures to categories of user intent; do not "
        "list the queries above or their specific details: the description must work for "
        "requests you have not seen, and it is shown in every conversation.",
        f"Aim for 100-200 words. Hard limit: {max_chars} characters; longer descriptions are "
        "rejected. Do not use the characters < or >.",
        "Tips: phrase it as 'Use this skill when/for ...'; describe user intent, not "
        "implementation; make it distinctive from neighbouring skills, and say what it is not for "
        "when near-misses trigger it.",
        f"This is candidate {variant + 1} of {request.count}. {_STYLES[variant % len(_STYLES)]}",
        "",
        "Reply with the new description only, inside <new_description></new_description> tags.",
    ]
    return "\n".join(lines)


def build_retry_prompt(base: str, previous: str, problem: str, max_chars: int = MAX_CHARS) -> str:
    shown = previous if len(previous) <= 2 * max_chars else previous[: 2 * max_chars] + " ..."
    return (f"{base}\n\n---\nYour previous answer was rejected: {problem}.\n"
            f"Previous answer ({len(previous)} characters): {_q(shown)}\n"
            f"Write a corrected description: at most {max_chars} characters, no < or >, keep the "
            "trigger words. Reply inside <new_description></new_description> tags.")


_TAG = re.compile(r"<new_description>(.*?)</new_description>", re.DOTALL)


def parse_response(text: str) -> str | None:
    """The first ``<new_description>`` block, normalised to one paragraph; None when the reply
    has none. A refusal or a preamble is not a description: skill-creator takes the whole
    reply then (its bug B10), which makes a candidate of "I would rather not ..." and pays
    to evaluate it."""
    match = _TAG.search(text)
    return normalise(match.group(1)) if match else None
