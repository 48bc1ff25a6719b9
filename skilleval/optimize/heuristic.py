"""A deterministic description rewriter: a *heuristic*, not a model.

Used by the ``stub`` proposer directly, and by the simulated ``llm`` responder
(`skilleval.optimize.prompts`), which recovers the same inputs by reading its prompt. It
writes what a careful author would, from the train failures and the skill itself:

1. **Purpose** from the skill body's first prose paragraph (what the skill does).
2. **When to use**: the body's own sentences or bullet points that best cover the intents of
   the train positives, weighted towards the missed ones. The body is general by nature, so
   this generalises instead of echoing the queries.
3. **Vocabulary** the positives share (a word in two or more of them, or also in the body)
   that the text above does not already say: "Also for requests mentioning ...".
4. **Scope**: for each false trigger, its words that no positive uses are stated as out of
   scope ("Not for ...").

Candidate ``variant`` k changes how much of each part goes in and the sentence shapes, so a
batch explores short and long, body-led and vocabulary-led descriptions.

It knows only what a writer knows: English function words (a list written from scratch) and
the published Snowball stemmer. Nothing comes from the simulator (`skilleval/sim/`), whose
word lists and exclusion patterns an offline result must not be tuned to
(``tests/optimize/test_no_sim_internals.py``).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import snowballstemmer

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[.'][A-Za-z0-9]+)*")
# English function words and chat filler, written from scratch by grammatical category (a
# general list, not any evaluator's: the proposer must know only what a writer knows).
# Why not a packaged list: the big ones (stop-words' 1,300 English words) also drop content
# words such as "date", "changes" or "fix" that a description needs.
_STOP = frozenset(
    # articles, determiners, quantifiers
    """a an the this that these those some any all each every both either neither few many
    much more most other another such own same no
    """
    # pronouns
    """i me my mine myself we us our ours you your yours he him his she her it its they them
    their theirs what which who whom whose something anything everything nothing
    """
    # prepositions and conjunctions
    """of to in on at by for from with without into onto over under about as than then and or
    but if so because while after before between through during per via up down out off
    """
    # auxiliaries and modals
    """is are was were be been being am do does did doing have has had having can could shall
    should will would may might must
    """
    # adverbs and question words
    """not also only just very too again once here there when where why how now still even
    really actually maybe already
    """
    # chat filler and contractions (apostrophes are dropped before the lookup)
    """please thanks thank hi hey hello ok okay yes sure pls im ive id dont cant wont isnt
    its thats theres whats lets""".split()
)
# Whole clauses that say what *not* to do; a body sentence holding one is a scope warning,
# not a "when to use" statement, so it is never quoted as a use case. General English
# negation, chosen by a writer's sense, not by what any evaluator parses.
# A case that states a situation, not an action: it has a finite verb of being or wanting.
_SITUATION = re.compile(r"\b(is|are|was|were|has|have|wants?|needs?|asks?|says?)\b", re.I)
_NEGATION = re.compile(r"\b(not|never|no longer|n't|instead of|rather than|except|avoid|unless)\b", re.I)


def stem(word: str) -> str:
    """The Snowball (Porter 2) English stem: a published, general stemmer."""
    return _STEMMER.stemWord(word.lower().replace("'", ""))


_STEMMER = snowballstemmer.stemmer("english")


def words(text: str) -> list[tuple[str, str]]:
    """(surface, stem) of the content words of a text, in order."""
    return [(w, s) for w, s, _, _ in spans(text)]


def spans(text: str) -> list[tuple[str, str, int, int]]:
    """(surface, stem, start, end) of the content words of a text, in order."""
    out = []
    for m in _WORD.finditer(text):
        w = m.group(0)
        if w.lower() in _STOP or len(w) < 2 or w.lower().replace("'", "") in _STOP:
            continue
        out.append((w, stem(w), m.start(), m.end()))
    return out


def stems(text: str) -> set[str]:
    return {s for _, s in words(text)}


@dataclass(frozen=True)
class Result:
    query: str
    should_trigger: bool
    rate: float
    passed: bool


@dataclass(frozen=True)
class Inputs:
    skill_name: str
    body: str
    current: str
    results: tuple[Result, ...]
    tried: tuple[str, ...] = ()
    history: tuple[tuple[Result, ...], ...] = ()  # train results of earlier attempts

    @classmethod
    def from_request(cls, request) -> "Inputs":  # noqa: ANN001 - a ProposalRequest
        conv = lambda rs: tuple(Result(r.query, r.should_trigger, r.rate, r.passed) for r in rs)  # noqa: E731
        return cls(request.skill_name, request.skill_body, request.current_description,
                   conv(request.train_results), tuple(sorted(request.tried())),
                   tuple(conv(a.results) for a in request.history))


# -- the skill body -------------------------------------------------------------------------


def _clean(line: str) -> str:
    line = re.sub(r"`([^`]*)`", r"\1", line)
    line = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"[*_#<>|]", " ", line)
    line = re.sub(r"\(e\.g\.[^)]*\)", "", line)
    return " ".join(line.split()).strip(" -:;")


# A heading *about* when the skill applies leads with its word ("When this applies", "Use
# cases", "Scope"); "Step 5: Split columns (only when asked)" is a how-to step.
_SCOPE_HEADING = re.compile(r"^#+\s*(when|use|uses|using|trigger|applies|scope|purpose|overview|about)\b",
                            re.I)


@dataclass(frozen=True)
class Unit:
    text: str
    prior: float  # bullets under a "When to use"-like heading count most
    scope: bool = False


def body_units(body: str) -> tuple[str, list[Unit]]:
    """(summary, units): the first prose paragraph, and candidate sentences/bullets.

    Definition-like lines ("Label: detail") and conditional steps ("If decoding fails, retry
    ...") are skipped: they describe how the skill works, not when to use it.
    """
    blocks: list[tuple[str, str, bool]] = []  # (kind, text, under a scope heading)
    kind, buf, in_code, scope = "", [], False, False

    def close() -> None:
        nonlocal kind, buf
        if buf:
            blocks.append((kind, _clean(" ".join(buf)), scope))
        kind, buf = "", []

    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            close()
            in_code = not in_code
            continue
        if in_code:
            continue
        if not line or line.startswith(("#", "|")):
            close()
            if line.startswith("#"):
                scope = bool(_SCOPE_HEADING.search(line))
            continue
        bullet = re.match(r"^(?:[-*]|\d+\.)\s+", line)
        if bullet:
            close()
            kind, buf = "bullet", [line[bullet.end():]]
        elif kind == "bullet" and raw[:1].isspace():
            buf.append(line)
        else:
            if kind == "bullet":
                close()
            kind = "para"
            buf.append(line)
    close()

    summary = next((t for k, t, _ in blocks if k == "para" and t), "")
    units: list[Unit] = []
    for k, text, in_scope in blocks:
        pieces = [text] if k == "bullet" else [s for s in re.split(r"(?<=[.!?])\s+", text) if s]
        for piece in pieces:
            if ":" in piece or ";" in piece or len(words(piece)) < 3 or len(piece) > 160:
                continue
            if re.match(r"(if|otherwise)\b", piece, re.I):  # "If X, do Y": a how-to step
                continue
            units.append(Unit(piece, (1.3 if k == "bullet" else 1.0) * (2.0 if in_scope else 1.0),
                              in_scope))
    if any(u.scope for u in units):  # the author said when it applies: trust that most
        units = [u if u.scope else Unit(u.text, u.prior * 0.4) for u in units]
    return summary, units


def _first_sentences(text: str, limit: int) -> str:
    out = ""
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if out and len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    if len(out) > limit:  # cut at the last clause boundary that fits
        cut = out[:limit]
        cut = cut[: cut.rfind(",")] if "," in cut[limit // 2:] else cut.rsplit(" ", 1)[0]
        out = re.sub(r"\s+(and|or|but|with|to|of|the|a)$", "", cut.rstrip(" ,;:")) + "."
    return out


def _lower_first(s: str) -> str:
    """Lower-case a sentence's first letter, unless the first word is an acronym ("CSV")."""
    first = s.split(" ", 1)[0]
    return s if len(first) > 1 and first.isupper() else s[:1].lower() + s[1:]


def _join(items: Sequence[str], last: str = "or") -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


# -- the rewrite ----------------------------------------------------------------------------

# (body units, extra terms, exclusions per false trigger, summary chars) per variant shape
_SHAPES = [(3, 4, 1, 260), (5, 8, 1, 200), (1, 10, 1, 140)]
# at most this many of the author's own "when to use" cases go in
_MAX_STATED = 6


def rewrite(inp: Inputs, variant: int = 0, *, max_chars: int = 1024) -> str:
    n_units, n_terms, n_excl, summary_len = _SHAPES[variant % len(_SHAPES)]
    n_units += variant // len(_SHAPES)
    n_terms += 2 * (variant // len(_SHAPES))
    summary, units = body_units(inp.body)
    positives = [r for r in inp.results if r.should_trigger]
    negatives = [r for r in inp.results if not r.should_trigger]
    scope_text = " ".join([summary] + [u.text for u in units if u.scope])
    body_stems = stems(scope_text if any(u.scope for u in units) else inp.body)

    pos_df: Counter[str] = Counter()
    weight: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = {}
    for r in positives:
        w = 1.0 + (1.0 - r.rate) if not r.passed else 0.5
        for s in {s for _, s in words(r.query)}:
            pos_df[s] += 1
            weight[s] += w
        for word, s in words(r.query):
            # "List" opening a query is "list"; "PRs" and "GitHub" keep their capitals
            surface.setdefault(s, Counter())[word.lower() if word[1:].islower() else word] += 1
    neg_df: Counter[str] = Counter(s for r in negatives for s in stems(r.query))
    # False triggers of the current description and of earlier attempts: a near-miss that
    # fired once will fire again when the words that drew it come back.
    false: dict[str, Result] = {}
    for r in [*inp.results, *(x for attempt in inp.history for x in attempt)]:
        if not r.should_trigger and not r.passed and r.rate > false.get(r.query, r).rate - 1e-9:
            false[r.query] = r
    lure = {s for r in false.values() for s in stems(r.query) if pos_df[s] == 0}

    def score(s: str) -> float:
        if s.isdigit():
            return 0.0
        general = pos_df[s] >= 2 or (s in body_stems and len(s) >= 3)
        if not general or neg_df[s] >= max(1, pos_df[s]):
            return 0.0
        return weight[s] * (1.5 if s in body_stems else 1.0) - 0.5 * neg_df[s]

    intent = {s: score(s) for s in weight}
    intent = {s: v for s, v in intent.items() if v > 0}

    # 2. body units that cover the positives' intents
    def unit_score(u: Unit) -> float:
        us = stems(u.text)
        gain = sum(intent.get(s, 0.0) for s in us) - 0.7 * len(us & lure)
        return u.prior * gain / max(1.0, len(us)) ** 0.5

    stated = [u for u in units if u.scope and not _NEGATION.search(u.text)]
    if stated:
        # The author wrote when the skill applies: state every case of it, in the author's
        # order, not only the ones this train sample happens to exercise (those would fit the
        # description to the sample; the author's list is about the requests to come). Only a
        # long list is cut, to the cases that best cover the positives, and each later round
        # of variants (a writer asked not to repeat an attempt) leaves out one more of them.
        cap = max(1, min(_MAX_STATED, len(stated)) - variant // len(_SHAPES))
        keep = sorted(stated, key=lambda u: (-unit_score(u), units.index(u)))[:cap]
        chosen = [u.text for u in stated if u in keep]
    else:
        ranked = sorted((u for u in units if not _NEGATION.search(u.text) and unit_score(u) > 0),
                        key=lambda u: (-unit_score(u), units.index(u)))
        chosen = [u.text for u in ranked[:n_units]]
    purpose = _first_sentences(summary, summary_len) if summary else f"The {inp.skill_name} skill."
    # A body sentence that is already the purpose is not said twice.
    chosen = [c for c in chosen if c.rstrip(".") not in purpose]
    covered = stems(purpose) | {s for u in chosen for s in stems(u)}

    # 3. shared vocabulary not yet said
    extra = [s for s in sorted(intent, key=lambda s: (-intent[s], s))
             if s not in covered and len(s) >= 3][:n_terms]
    extra_words = [surface[s].most_common(1)[0][0] for s in extra]

    # 4. scope: what false triggers were about, in words no positive uses. One short topic
    #    phrase per false trigger (its longest run of such words, at most four), never
    #    version numbers or file names: a scope statement, not a list of the queries' words.
    #    The phrase is quoted as the request put it (its small words kept: "set up a GitHub
    #    action", not "set github action"); one that opens the request is what the user asked
    #    to do, so it reads "requests to explain semantic versioning".
    excl: list[str] = []
    for r in sorted(false.values(), key=lambda r: (-r.rate, r.query)):
        found = spans(r.query)
        runs_: list[list[tuple[str, str, int, int]]] = []
        run: list[tuple[str, str, int, int]] = []
        for item in [*found, None]:
            # a run stops at punctuation or a long gap ("versioning to me - when is ...")
            joined = run and item is not None and \
                re.fullmatch(r"\s+(?:[A-Za-z']+\s+){0,2}", r.query[run[-1][3]:item[2]])
            if run and not joined:
                runs_.append(run[:4])
                run = []
            if item is not None and pos_df[item[1]] == 0 and len(item[1]) >= 3 and \
                    not any(ch.isdigit() or ch == "." for ch in item[0]):
                run.append(item)
            elif run:
                runs_.append(run[:4])
                run = []
        for p in sorted(runs_, key=lambda ws: -sum(len(w[0]) for w in ws))[:n_excl]:
            phrase = " ".join(r.query[p[0][2]:p[-1][3]].split())
            phrase = _lower_first(phrase) if phrase.split()[0][1:].islower() else phrase
            opens = bool(found) and p[0][2] == found[0][2]
            item = f"requests to {phrase}" if opens else phrase
            if item not in excl:
                excl.append(item)

    parts = [purpose.rstrip(".") + "."]
    if chosen:
        # How a case reads after the lead: one opening with a verb in -ing ("turning notes
        # into minutes") follows "use it for"; one in the imperative ("Convert a Dockerfile
        # to multi-stage") follows "use it to"; a situation ("the user pastes a transcript",
        # "a Docker image is too large") follows "when". One lead for all read "when the user
        # is the user pastes ..." and "when make duplicate names unique".
        doing, to, when = [], [], []
        for c in (_lower_first(u.rstrip(".")) for u in chosen):
            first = c.split()[0].lower().rstrip(",;:")
            if first in ("if", "when"):
                when.append(c.split(" ", 1)[1] if " " in c else c)
            elif first.endswith("ing") and first not in _STOP:
                doing.append(c)
            elif first in _STOP or _SITUATION.search(" ".join(c.split()[:4])):
                when.append(c)
            else:
                to.append(c)
        lead = "Use this skill" if variant % 2 == 0 else "Use it"
        if doing:
            parts.append(f"{lead} for {_join(doing)}.")
        if to:
            parts.append(f"{'Also use it' if doing else lead} to {_join(to)}.")
        if when:
            parts.append(f"{'Also use it' if doing or to else lead} when {_join(when)}.")
    if extra_words:
        # Words the requests share, not phrases: said as the words people use, not as if
        # they were topics ("requests that mention line").
        shown = [f'"{w}"' for w in extra_words]
        lead = "Requests for it often use the words" if chosen or len(parts) > 1 else \
            "Use this skill when a request uses the words"
        parts.append(f"{lead} {_join(shown)}." if len(shown) > 1 else
                     f"{lead.replace('the words', 'the word')} {shown[0]}.")
    text = " ".join(parts)
    if excl:
        # Two plain ways writers state scope (Anthropic's own skill descriptions use both).
        scope = "Not for {}." if variant % 2 == 0 else "Do not use it for {}."
        tail = " " + scope.format(_join(excl))
        room = max_chars - len(text)
        while excl and len(tail) > room:
            excl.pop()
            tail = " " + scope.format(_join(excl)) if excl else ""
        text += tail
    if len(text) > max_chars:
        text = text[:max_chars].rsplit(" ", 1)[0].rstrip(",;:") + "."
    # a space before a comma or full stop goes; ".vtt" or ".srt" keep theirs
    text = re.sub(r"\s+([,.])(?=\s|$)", r"\1", text.replace("<", "").replace(">", ""))
    return " ".join(text.split())
