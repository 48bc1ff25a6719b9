"""The offline drafter: a *baseline*, not a model. It needs no backend and works for any skill.

It drafts from the skill's own text and nothing else (never from the simulator, whose
scoring it must not know):

* **Should trigger** — one query per unit of what the skill says it does, in this order:
  the "use when…" clauses (description and "When this applies" sections), then the body's
  headings, bullets and sentences. Each unit is dropped into one of several request shapes
  (terse, chatty, polite, lowercase, with a typo) with concrete details: a file name built
  from a format the skill mentions, a row count, a deadline.
* **Should not trigger (near-misses)** — taken round-robin from the skill's own "not for…"
  clauses, from the competitor skills' "use when…" clauses (the listed competitors first,
  then the bundled distractors) and, if still short, from questions *about* the topic that
  ask for no work.

Every query carries a ``rationale`` and the SKILL.md ``span`` (sentence) it exercises; a
competitor near-miss points at the sentence of our skill that shares most words with it,
which is what makes it *near*. The phrasing is template-driven and reads like it: review and
edit a draft (``skilleval review-evals``) before trusting numbers built on it.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from skilleval.domain import Skill
from skilleval.evalsets.similar import is_near, normalise
from skilleval.evalsets.text import (NOT_HEADING, USE_HEADING, Clause, Span, body_spans, content_stems,
                                     scope_clauses, skill_spans)

_FORMAT = re.compile(r"(?<![\w/])\.?(csv|tsv|xlsx|xlsm|xls|pdf|pptx|docx|json|jsonl|yaml|yml|md|txt|"
                     r"html|xml|sql|py|js|ts|ipynb|log|png|svg|zip|toml|ini|parquet)\b", re.I)
_STEMS = ("export_2024-03", "q3_report", "customers", "orders_final_v2", "data (1)", "notes",
          "team_list", "draft_v3", "weekly_dump", "backup_old")
_SKIP_HEADINGS = re.compile(r"^(example|examples|reference|references|output checklist|notes?|"
                            r"summary|overview|edge cases|appendix|see also)\b", re.I)
_MD = re.compile(r"[`*_]{1,3}")
_STEP = re.compile(r"^(step\s*\d+\s*[:.-]\s*)", re.I)

_POSITIVE_SHAPES = (
    "{x} — the file is {file}, around {n} rows",
    "ok so i've got {file} and basically need this: {x}. how would you do it?",
    "Could you help me with this? {X}. It's for {file} ({n} entries), due {day}.",
    "{file} -> {x} pls",
    "hey quick one, {x} for {file}; last time it took me {m} minutes by hand",
    "I'm working on {file} for a client. {X}. Please keep the original untouched.",
    "{x}?? my {file} is a mess ({n} lines) and the import is on {day}",
    "Need to {x} on {file} before the {day} meeting — can you handle it end to end?",
)
_NEGATIVE_SHAPES = (
    "{X} — it's {file}, about {n} rows",
    "can you help with {x}? working from {file}",
    "need a hand: {x} ({file}, {n} items), by {day} ideally",
    "{x} pls, the file is {file}",
    "Quick question about {file}: {x}. What would you do?",
)
_TOPIC_SHAPES = (
    "just curious, in general terms: why would someone {x}? no file, just the idea",
    "what's the history behind the practice of '{x}'? asking for a blog post",
    "is '{x}' something people still argue about? give me the pros and cons in two lines",
)
_DAYS = ("monday", "Tuesday", "friday", "Thursday 3pm", "end of day", "tomorrow morning")


@dataclass
class Drafted:
    """One drafted query with its provenance."""

    query: str
    should_trigger: bool
    rationale: str
    span: str
    source: str

    def row(self, idx: int) -> dict[str, Any]:
        return {"query": self.query, "should_trigger": self.should_trigger, "id": f"q{idx:03d}",
                "rationale": self.rationale, "span": self.span, "source": self.source}


_LEAD = re.compile(r"^(?:the user\s+)?(?:wants|needs|asks(?: for| how| to)?|has)\s+(?:to\s+)?", re.I)


def _clean(text: str) -> str:
    text = _STEP.sub("", _MD.sub("", text)).strip().rstrip(".:;")
    return _LEAD.sub("", " ".join(text.split()))


def _formats(skill: Skill) -> list[str]:
    """The two file formats the skill mentions most (its description counts double)."""
    counts: dict[str, int] = {}
    for weight, text in ((2, skill.description), (1, skill.body)):
        for m in _FORMAT.finditer(text):
            counts[m.group(1).lower()] = counts.get(m.group(1).lower(), 0) + weight
    ranked = sorted(counts, key=lambda e: -counts[e])
    return ranked[:2] or ["txt"]


def _leak_free(text: str, skill: Skill) -> str:
    """The skill's name (and its spaced form) taken out: a query that names the skill is leaky."""
    for name in {skill.name, skill.name.replace("-", " "), skill.name.replace("-", "_")}:
        text = re.sub(re.escape(name), "this", text, flags=re.I)
    return text


def _typo(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    long = [i for i, w in enumerate(words) if len(w) > 5 and w.isalpha()]
    if not long:
        return text
    i = rng.choice(long)
    w = words[i]
    k = rng.randrange(1, len(w) - 2)
    words[i] = w[:k] + w[k + 1] + w[k] + w[k + 2:]
    return " ".join(words)


def _fill(shape: str, unit: str, formats: Sequence[str], rng: random.Random) -> str:
    x = unit[0].lower() + unit[1:] if unit[:2] != unit[:2].upper() else unit
    file = f"{rng.choice(_STEMS)}.{rng.choice(formats)}"
    return shape.format(x=x, X=unit[0].upper() + unit[1:], file=file, n=rng.choice(range(12, 5000, 37)),
                        m=rng.choice((10, 15, 20, 40, 90)), day=rng.choice(_DAYS))


def _positive_units(skill: Skill) -> list[tuple[str, str, str]]:
    """(unit text, span, kind) for what the skill does, most explicit first."""
    units: list[tuple[str, str, str]] = []
    for c in scope_clauses(skill):
        if c.polarity == "use":
            units.append((_clean(c.text), c.span, "use-when clause"))
    spans: list[Span] = body_spans(skill.body)
    heads = [s for s in spans if s.kind == "heading" and not _SKIP_HEADINGS.match(_clean(s.text))
             and not USE_HEADING.search(s.text) and not NOT_HEADING.search(s.text)]
    for s in heads[1:] if len(heads) > 1 else heads:  # the first heading is usually the title
        units.append((_clean(s.text), s.text, f"heading under '{s.section}'"))
    for s in spans:
        if s.kind in ("bullet", "sentence") and 3 <= len(content_stems(s.text)) and len(s.text) <= 160:
            units.append((_clean(s.text), s.text, f"{s.kind} in '{s.section or 'preamble'}'"))
    # a unit that is only the skill's name (the title heading) says nothing once the name is
    # taken out (_leak_free): it would give should-trigger queries about "this"
    return [u for u in units if len(u[0]) >= 4 and content_stems(_leak_free(u[0], skill))]


def _nearest_span(text: str, skill: Skill) -> str:
    """Our SKILL.md sentence sharing most content words with `text`; with none shared, the
    description's first sentence (the definition the query falls outside of)."""
    want = content_stems(text)
    first = skill_spans(skill)[:1]
    best, score = (first[0].text if first else ""), 0
    for s in [*scope_clauses(skill), *body_spans(skill.body)]:
        sentence = s.span if isinstance(s, Clause) else s.text
        overlap = len(want & content_stems(sentence))
        if overlap > score:
            best, score = sentence, overlap
    return best


def _negative_units(skill: Skill, competitors: Sequence[Skill]) -> Iterator[tuple[str, str, str, str]]:
    """(unit, span, rationale, source), round-robin over the sources."""
    own = [c for c in scope_clauses(skill) if c.polarity == "not"]
    sources: list[list[tuple[str, str, str, str]]] = [[
        (_clean(c.text), c.span, f"Near-miss from the skill's own 'not for' statement: {c.span!r}",
         "not-for") for c in own]]
    mine = content_stems(f"{skill.description} {skill.body}")
    for comp in competitors:
        if comp.name == skill.name:
            continue
        clauses = [c for c in scope_clauses(comp)
                   if c.polarity == "use" and not re.match(r"(not|never|no)\b", c.text, re.I)]
        clauses.sort(key=lambda c: -len(content_stems(c.text) & mine))  # nearest first
        sources.append([(_clean(c.text), _nearest_span(c.text, skill),
                         f"Near-miss: the competitor skill '{comp.name}' does this ({c.text!r}); "
                         "it shares vocabulary with this skill but is not its job",
                         f"competitor:{comp.name}") for c in clauses])
    # the skill's own "not for" clauses are its most explicit near-misses: two per round
    own_q, others = list(sources[0]), sources[1:]
    depth = 0
    while own_q or any(depth < len(s) for s in others):
        for _ in range(2):
            if own_q:
                yield own_q.pop(0)
        for s in others:
            if depth < len(s):
                yield s[depth]
        depth += 1


def draft_offline(skill: Skill, competitors: Sequence[Skill], n: int, positives: int,
                  seed: int = 0) -> list[dict[str, Any]]:
    """`n` queries, `positives` of which should trigger, with no duplicates or near-duplicates."""
    rng = random.Random(f"draft|{skill.name}|{seed}")
    formats = _formats(skill)
    taken: list[str] = []

    def accept(text: str) -> bool:
        text = _leak_free(text, skill)
        if not normalise(text) or is_near(text, taken):
            return False
        taken.append(text)
        return True

    pos: list[Drafted] = []
    units = _positive_units(skill) or [(_clean(skill.description), skill.description, "description")]
    for round_ in range(8):
        for i, (unit, span, kind) in enumerate(units):
            if len(pos) >= positives:
                break
            shape = _POSITIVE_SHAPES[(i + round_ * 3) % len(_POSITIVE_SHAPES)]
            text = _fill(shape, unit, formats, rng)
            if rng.random() < 0.25:
                text = _typo(text, rng)
            if rng.random() < 0.3:
                text = text.lower()
            if accept(text):
                pos.append(Drafted(taken[-1], True, f"Asks for what the {kind} says the skill does "
                                   "(phrased as a user would, with concrete details).", span, "use"))
        if len(pos) >= positives:
            break

    neg: list[Drafted] = []
    need = n - positives
    neg_units = list(_negative_units(skill, competitors))
    for round_ in range(6):
        for i, (unit, span, why, source) in enumerate(neg_units):
            if len(neg) >= need:
                break
            text = _fill(_NEGATIVE_SHAPES[(i + round_) % len(_NEGATIVE_SHAPES)], unit,
                         formats if source == "not-for" else _formats_of(unit, formats), rng)
            if accept(text):
                neg.append(Drafted(taken[-1], False, why, span, source))
        if len(neg) >= need:
            break
    topic = [u for u in units]
    for round_ in range(6):  # still short: questions about the topic that ask for no work
        for i, (unit, span, _kind) in enumerate(topic):
            if len(neg) >= need:
                break
            text = _fill(_TOPIC_SHAPES[(i + round_) % len(_TOPIC_SHAPES)], unit, formats, rng)
            if accept(text):
                neg.append(Drafted(taken[-1], False, "Near-miss: asks about the topic in general "
                                   "and wants no work done on any file.", span, "topic-question"))
        if len(neg) >= need:
            break
    return [d.row(i) for i, d in enumerate([*pos, *neg])]


def _formats_of(unit: str, fallback: Sequence[str]) -> list[str]:
    found = [m.group(1).lower() for m in _FORMAT.finditer(unit)]
    return found or list(fallback)
