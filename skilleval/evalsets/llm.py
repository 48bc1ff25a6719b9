"""The LLM drafter: asks the job's backend (``backend.complete``) for a trigger eval set.

The answer must be a JSON array and nothing else (one surrounding Markdown code fence is
tolerated, prose is not): no fishing for brackets inside a chatty reply, because a parser that
guesses is how an eval set silently loses entries. Each item is checked (types, a non-empty
query, not naming the skill, no duplicate or near-duplicate of an accepted query, the class
still needed). Valid items are kept; the next request states the problems and asks only for
what is still missing, up to ``max_attempts`` requests. A ``span`` that is not a sentence of
SKILL.md is re-matched to the nearest sentence (the query is still good) and noted.

The simulator answers this prompt (``[[skilleval-task: draft-trigger-evals]]``) from the
prompt's own content with the offline drafter (``skilleval.sim.drafter_responder``), so the
whole path, re-asks included, runs offline and against serve-sim.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from skilleval import sample_key
from skilleval.budget import settled_on_error
from skilleval.domain import Skill
from skilleval.errors import HarnessError
from skilleval.evalsets.offline import _nearest_span
from skilleval.evalsets.similar import is_near
from skilleval.evalsets.text import names_skill
from skilleval.task_marker import task_marker

TASK = "draft-trigger-evals"
_FENCE = re.compile(r"\A```(?:json)?\s*\n(.*)\n```\s*\Z", re.DOTALL)


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def build_prompt(skill: Skill, competitors: Sequence[Skill], positives: int, negatives: int,
                 accepted: Sequence[dict[str, Any]] = (), problems: Sequence[str] = ()) -> str:
    lines = [
        task_marker(TASK),
        f"You are writing a trigger eval set for a Claude Code skill called {_q(skill.name)}. Claude "
        "sees only each skill's name and description and decides from them whether to load the "
        "skill for a user's request. The eval set checks that decision.",
        "",
        "<skill_content>",
        f"---\nname: {skill.name}\ndescription: {_q(skill.description)}\n---",
        skill.body.strip(),
        "</skill_content>",
        "",
        "Other skills listed next to it (near-misses often belong to one of these):",
        "<competitors>",
        *[f"- {_q(c.name)}: {_q(c.description)}" for c in competitors if c.name != skill.name],
        "</competitors>",
        "",
        f"Write {positives} queries that SHOULD trigger the skill and {negatives} that should NOT.",
        "- Realistic requests a user would type: concrete details (file names, numbers, context, "
        "what they tried), varied length and register; lowercase, abbreviations and typos are fine.",
        "- Should-trigger queries cover different things the skill is for, including ones that do "
        "not use its obvious keywords.",
        "- Should-not queries are near-misses: they share words or topic with the skill but need "
        "something else: the skill's own 'not for' cases, a competitor's job, or a question about "
        "the topic that asks for no work. No obviously unrelated requests.",
        f"- Never name the skill ({_q(skill.name)}) in a query. No two queries alike.",
        "- For each query give a one-sentence rationale and the span: one sentence copied "
        "verbatim from SKILL.md (description or body) that the query exercises.",
    ]
    if accepted:
        lines += ["", "Already accepted (do not repeat or paraphrase these):",
                  *[f"- {_q(r['query'])}" for r in accepted]]
    if problems:
        lines += ["", "Your previous answer had problems:", *[f"- {p}" for p in problems[:20]]]
    lines += ["", f"Counts wanted: should_trigger=true: {positives}; should_trigger=false: {negatives}.",
              'Reply with a JSON array only, no prose: [{"query": "...", "should_trigger": true, '
              '"rationale": "...", "span": "..."}, ...]']
    return "\n".join(lines)


def parse_answer(text: str) -> list[Any]:
    """The JSON array of an answer; ValueError with the reason otherwise."""
    body = text.strip()
    if m := _FENCE.match(body):
        body = m.group(1).strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the answer is not a JSON array (invalid JSON at line {exc.lineno} "
                         f"column {exc.colno}: {exc.msg}); reply with the array only") from None
    if not isinstance(data, list):
        raise ValueError(f"the answer is JSON but a {type(data).__name__}, not an array")
    return data


def _flat(text: str) -> str:
    return " ".join(re.sub(r"[`*_]", "", text).split()).casefold()


@dataclass
class Drafting:
    """Accepted rows so far and the log of every request."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0
    cost_usd: float = 0.0
    notes: list[str] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)


def check_items(items: list[Any], skill: Skill, state: Drafting, need: dict[bool, int]) -> list[str]:
    """Accept the valid items into `state.rows`; return the problems of the others."""
    problems: list[str] = []
    text = _flat(f"{skill.description}\n{skill.body}")
    for i, item in enumerate(items):
        where = f"item {i}"
        if not isinstance(item, dict):
            problems.append(f"{where}: not an object")
            continue
        query, st = item.get("query"), item.get("should_trigger")
        if not isinstance(query, str) or not query.strip():
            problems.append(f"{where}: 'query' must be a non-empty string")
            continue
        if not isinstance(st, bool):
            problems.append(f"{where}: 'should_trigger' must be true or false")
            continue
        query = query.strip()
        if names_skill(query, skill.name):
            problems.append(f"{where}: the query names the skill ({_q(query[:60])}); rephrase without it")
            continue
        if is_near(query, [r["query"] for r in state.rows]):
            problems.append(f"{where}: duplicates an accepted query ({_q(query[:60])})")
            continue
        if need[st] <= 0:
            problems.append(f"{where}: too many should_trigger={str(st).lower()} queries")
            continue
        rationale = item.get("rationale") if isinstance(item.get("rationale"), str) else ""
        span = item.get("span") if isinstance(item.get("span"), str) else ""
        if not span.strip() or _flat(span) not in text:
            nearest = _nearest_span(query, skill)
            state.notes.append(f"span of {_q(query[:40])} re-matched to SKILL.md ({_q(span[:40])} "
                               "is not a sentence of it)")
            span = nearest
        need[st] -= 1
        state.rows.append({"query": query, "should_trigger": st, "rationale": rationale.strip(),
                           "span": span.strip(), "source": "llm"})
    return problems


async def draft_llm(skill: Skill, competitors: Sequence[Skill], n: int, positives: int, backend: Any,
                    *, max_attempts: int = 3, max_tokens: int = 8192, budget: Any = None) -> Drafting:
    """Draft with the backend; HarnessError when `max_attempts` requests do not yield `n` rows."""
    state = Drafting()
    need = {True: positives, False: n - positives}
    problems: list[str] = []
    for attempt in range(max_attempts):
        prompt = build_prompt(skill, competitors, need[True], need[False], state.rows, problems)
        if budget is not None:
            budget.reserve(1)
        state.calls += 1  # counted once sent: a request that fails is a call too
        with sample_key.keyed(f"draft|{attempt}"):  # the same draft on every run (sample_key)
            completion = await settled_on_error(backend.complete(prompt, max_tokens=max_tokens), budget)
        if budget is not None:
            budget.charge_usd(completion.cost_usd)
        state.cost_usd += completion.cost_usd
        try:
            problems = check_items(parse_answer(completion.text), skill, state, need)
        except ValueError as exc:
            problems = [str(exc)]
        state.log.append({"prompt": prompt, "response": completion.text, "problems": problems})
        if need[True] <= 0 and need[False] <= 0:
            break
    if need[True] > 0 or need[False] > 0:
        raise HarnessError(f"draft: the model gave {len(state.rows)}/{n} usable queries after "
                           f"{state.calls} requests (last problems: {'; '.join(problems[:3]) or 'none'})")
    for i, row in enumerate(state.rows):
        row["id"] = f"q{i:03d}"
    state.rows.sort(key=lambda r: not r["should_trigger"])
    return state
