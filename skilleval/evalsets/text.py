"""SKILL.md text as units a query can exercise: sentences, headings, bullets and clauses.

Why hand-written: a SKILL.md is Markdown written for a model, with short imperative
sentences, bullets and headings. A sentence splitter on ``. `` plus Markdown structure is
enough; a general NLP segmenter (pysbd, nltk) would be a heavy dependency for no gain here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from skilleval.domain import Skill

_FENCE = re.compile(r"^(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:'[A-Za-z0-9]+)*")
_STOP = frozenset(
    """a an the and or but if then of to in on at by for from with without into over under about
    as is are was were be been being am do does did have has had i me my we us our you your it
    its they them their this that these those there here what which who when where why how can
    could should would will shall may might must not no so too very just also only than some
    any all each every both more most other such own same up out please use using user users
    skill want wants need needs like make ask asks asked one even""".split())
# Leads of scope statements: what the skill is for, and what it is not for.
USE_LEAD = re.compile(
    r"\b(use (?:this|it)?\s*(?:skill\s*)?(?:whenever|when|for|if|to)|trigger (?:even )?when|"
    r"use when|applies when|for requests? (?:about|to))\b", re.I)
NOT_LEAD = re.compile(
    r"\b(do not use|don't use|never use|not for|not meant for|not intended for|"
    r"does not (?:handle|cover|edit)|is not for|avoid (?:this|using))\b", re.I)
# Headings of sections that list scope ("## When this applies", "## When not to use").
NOT_HEADING = re.compile(r"\b(when not|not for|out of scope|do not use|don't use|non-goals)\b", re.I)
USE_HEADING = re.compile(r"\b(when (?:this|it) applies|when to use|use (?:it |this )?(?:when|for)|"
                         r"applies|triggers?|use cases?|scope)\b", re.I)
_ITEM_LEAD = re.compile(r"^(?:the user\s+)?(?:only\s+)?(?:wants|needs|asks(?: for| how| to)?|has|says)\s+"
                        r"(?:to\s+)?", re.I)
_STRIP_LEAD = re.compile(
    r"^.*?\b(?:do not use (?:this |it )?(?:skill )?(?:for|when|to|on)?|don't use (?:this |it )?"
    r"(?:skill )?(?:for|when)?|not (?:meant |intended )?for|use (?:this|it)?\s*(?:skill\s*)?"
    r"(?:whenever|when|for|if|to)|trigger (?:even )?when|use when)\s*"
    r"(?:the user (?:wants to|asks (?:for|to)|needs to|has|says|only says)\s*)?", re.I)


@dataclass(frozen=True)
class Span:
    """One unit of SKILL.md text: where it is and what kind of unit it is."""

    text: str
    kind: str      # description | heading | bullet | sentence
    section: str   # the heading it sits under ("" for the description / preamble)
    line: int      # 1-based line in the body (0 for the description)


@dataclass(frozen=True)
class Clause:
    """One item of a scope statement ("dedupe rows", "SQL queries against a database")."""

    text: str
    polarity: str  # "use" or "not"
    span: str      # the sentence it came from


def stem(word: str) -> str:
    """A crude suffix stripper: enough to match 'dedupes' with 'dedupe' between a query and a
    clause of the same skill (a Snowball stemmer would add a dependency for little gain)."""
    w = word.lower().replace("'", "")
    for suf in ("ations", "ation", "ings", "ing", "ed", "ies", "es", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def content_stems(text: str) -> set[str]:
    return {stem(m.group(0)) for m in _WORD.finditer(text)
            if m.group(0).lower() not in _STOP and len(m.group(0)) > 1}


def split_sentences(text: str) -> list[str]:
    flat = " ".join(text.split())
    return [s.strip() for s in _SENTENCE_END.split(flat) if s.strip()]


def body_spans(body: str) -> list[Span]:
    """Headings, bullets and prose sentences of a SKILL.md body (code blocks left out)."""
    spans: list[Span] = []
    section = ""
    in_code = False
    para: list[str] = []
    para_line = 0

    def flush() -> None:
        nonlocal para
        if para:
            for s in split_sentences(" ".join(para)):
                spans.append(Span(s, "sentence", section, para_line))
        para = []

    for lineno, line in enumerate(body.splitlines(), 1):
        if _FENCE.match(line.strip()):
            flush()
            in_code = not in_code
            continue
        if in_code or line.lstrip().startswith("|"):  # code and tables are not prose
            flush()
            continue
        if not line.strip():
            flush()
            continue
        if m := _HEADING.match(line):
            flush()
            section = m.group(2).strip()
            spans.append(Span(section, "heading", section, lineno))
        elif m := _BULLET.match(line):
            flush()
            spans.append(Span(m.group(1).strip(), "bullet", section, lineno))
        elif spans and spans[-1].kind == "bullet" and line.startswith((" ", "\t")) and not para:
            last = spans.pop()  # a bullet continued on an indented line
            spans.append(Span(f"{last.text} {line.strip()}", "bullet", last.section, last.line))
        else:
            if not para:
                para_line = lineno
            para.append(line.strip())
    flush()
    return spans


def skill_spans(skill: Skill) -> list[Span]:
    """The description's sentences, then the body's units."""
    desc = [Span(s, "description", "", 0) for s in split_sentences(skill.description)]
    return desc + body_spans(skill.body)


def _split_items(rest: str) -> list[str]:
    """Split a list ("a, b (x, y), or c") on top-level commas/semicolons and a final 'or'/'and'."""
    items, depth, cur = [], 0, ""
    for ch in rest:
        depth += ch in "(["
        depth -= ch in ")]"
        if ch in ",;" and depth <= 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for item in items:
        item = re.sub(r"^\s*(?:or|and|nor)\s+", "", item.strip()).strip(" .:")
        item = re.sub(r"^(?:for|to)\s+", "", item, flags=re.I)
        item = _ITEM_LEAD.sub("", item)
        if len(content_stems(item)) >= 1 and len(item) >= 3:
            out.append(item)
    return out


def statement_polarity(sentence: str) -> str | None:
    """'not' for a not-for statement, 'use' for a use-when statement, else None."""
    if NOT_LEAD.search(sentence):
        return "not"
    if USE_LEAD.search(sentence):
        return "use"
    return None


def scope_clauses(skill: Skill) -> list[Clause]:
    """Clauses of the description (every sentence) and of the body's scope statements.

    A description sentence without a lead ("Clean and tidy messy CSV files.") is one 'use'
    clause, split at its list commas; body sentences count only when they state scope.
    """
    out: list[Clause] = []
    seen: set[tuple[str, str]] = set()
    for span in skill_spans(skill):
        if span.kind == "heading":
            continue
        pol = statement_polarity(span.text)
        if pol is None and span.kind in ("bullet", "sentence") and span.section:
            # an item of a "When this applies" / "When not to use" section is one clause
            section = "not" if NOT_HEADING.search(span.section) else \
                "use" if USE_HEADING.search(span.section) else None
            if section is not None:
                key = (span.text.lower(), section)
                if key not in seen:
                    seen.add(key)
                    out.append(Clause(span.text.rstrip("."), section, span.text))
            continue
        if pol is None and span.kind != "description":
            continue
        for part_pol, part in _polar_parts(span.text, pol or "use"):
            rest = _STRIP_LEAD.sub("", part, count=1) if USE_LEAD.search(part) or \
                NOT_LEAD.search(part) else part
            for item in _split_items(rest) or [part.strip(" ,.;")]:
                item_pol = part_pol
                if m := re.match(r"(?:but\s+)?not\s+", item, re.I):  # "..., not a text changelog"
                    item_pol, item = "not", item[m.end():]
                key = (item.lower(), item_pol)
                if item and key not in seen:
                    seen.add(key)
                    out.append(Clause(item, item_pol, span.text))
    return out


def _polar_parts(sentence: str, pol: str) -> list[tuple[str, str]]:
    """A sentence that says what the skill is for and then what it is not for ("Use for X,
    but not for Y") split into its 'use' and 'not' parts; otherwise the whole sentence."""
    use, neg = USE_LEAD.search(sentence), NOT_LEAD.search(sentence)
    if use and neg and use.start() < neg.start():
        return [("use", sentence[:neg.start()]), ("not", sentence[neg.start():])]
    return [(pol, sentence)]


def names_skill(query: str, name: str) -> bool:
    """True when `query` names the skill outright (a leaky query). A multi-word name
    ("csv-tidy") counts in any spelling (csv tidy, CSV_Tidy); a one-word name ("pdf") only
    next to the word skill ("the pdf skill"), since the bare word is the topic itself."""
    from skilleval.evalsets.similar import normalise

    parts = normalise(name).split()
    q = f" {normalise(query)} "
    if len(parts) >= 2:
        return f" {' '.join(parts)} " in q or f" {''.join(parts)} " in q
    return bool(parts) and (f" {parts[0]} skill " in q or f" skill {parts[0]} " in q)


def term(text: str) -> str:
    """`text` safe for a terminal line through rich: markup escaped, whitespace runs folded
    to one space, other control and format characters (ESC sequences, bidi overrides) shown
    as ``\\uXXXX`` instead of acting on the terminal. Queries and SKILL.md are hostile data."""
    import unicodedata

    from rich.markup import escape

    out = []
    for ch in " ".join(text.split()):
        out.append(f"\\u{ord(ch):04x}" if unicodedata.category(ch) in ("Cc", "Cf") else ch)
    return escape("".join(out))
