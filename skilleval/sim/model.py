"""The simulated model behind the `stub` backend and `serve-sim`. It is a simulator, not Claude.

How it decides whether a skill fires for a query (all lexical, all deterministic):

1. Text is lower-cased, split into words, stop words dropped, and each word reduced by a
   small suffix stemmer (``changelogs`` -> ``changelog``, ``merged`` -> ``merg``).
2. Each listed skill's description is split into sentences. A sentence that states a scope
   exclusion ("Not for ...", "Do not use ...", "... instead", "out of scope") contributes
   *negative* terms; every other sentence, and the skill name, contributes *positive* terms.
3. A skill's relevance to the query is Okapi BM25 over its positive terms (k1=1.2, b=0.3,
   length-normalised against a typical description of 30 content terms), with each query
   term weighted by a fixed informativeness weight (generic request words such as "file",
   "help" or "project" weigh less than specific ones), minus a penalty for every query term
   that falls in a negative clause.
4. The best relevance becomes the probability that *some* skill fires through a logistic
   curve, ``p = 1 / (1 + exp(-slope * (score - midpoint)))``. The model name shifts the
   midpoint a little (derived from a hash of the name), so sweeping models gives different,
   reproducible behaviour.
5. Two uniform numbers drawn from a seed (derived by the caller from model, listing, query
   and repeat index) decide: whether a skill fires (``u1 < p``), and which one, by a softmax
   over the skills' relevance (so a close competitor sometimes wins).

Consequences a user should know: synonyms unknown to the description never match; wording
the description with the words users actually type raises recall; explicit exclusions
lower false triggers. That is enough structure for an optimiser to improve a description,
and for a held-out split to reveal over-fitting to the train queries' exact words.
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from skilleval.domain import ListedSkill

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")  # "results.csv" -> results, csv
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+")
_EXCLUSION = re.compile(
    r"\b(not for|not to be used|do not use|don't use|never use|not intended|out of scope|"
    r"does not|doesn't|instead\b|rather than|except|excluding|avoid using)"
)

STOP = frozenset(
    """a an the and or but if then else of to in on at by for from with without into onto over
    under about as is are was were be been being am do does did doing have has had having i me
    my mine we us our you your yours he she it its they them their this that these those there
    here what which who whom whose when where why how can could should would will shall may
    might must not no yes so too very just also only than some any all each every both few more
    most other such own same again once up down out off please thanks thank hi hello hey ok okay
    get got use using used want wanted need needs like make made let lets im ive dont cant its
    one two something anything thing things way sure really actually maybe kind sort etc eg ie
    skill skills claude user users ask asks asked""".split()
)
# Words every request shares; they count, but for little.
GENERIC = frozenset(
    """help file files project projects task tasks work data write writing create new update
    change changes doc docs document documents text page code tool tools question questions
    quick simple time today list lists run show give look check find fix tell explain""".split()
)
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ed", "ies", "es", "s", "ly")
_ES_AFTER = ("s", "x", "z", "ch", "sh")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A deliberately small suffix stemmer (Porter would be overkill for a simulator):
    one inflectional suffix off, then a final silent "e", so that write/writing/writes,
    table/tables and merge/merged/merges meet."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix == "ies":
                base += "y"
            elif suffix == "es" and not base.endswith(_ES_AFTER):
                base = word[:-1]  # "spaces" -> "space": only the s was a suffix
            word = base
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


@lru_cache(maxsize=65536)
def terms(text: str) -> tuple[str, ...]:
    """Content terms of a text, in order, stemmed."""
    out = []
    for w in _WORD.findall(text.lower()):
        w = w.replace("'", "")
        if w in STOP or len(w) < 2:
            continue
        out.append(stem(w))
    return tuple(out)


def weight(term: str) -> float:
    """Informativeness of a query term: generic request words count for little."""
    if term in _GENERIC_STEMS:
        return 0.3
    if term.isdigit():
        return 0.2
    return 1.0


_GENERIC_STEMS = frozenset(stem(w) for w in GENERIC)


@dataclass(frozen=True)
class SkillProfile:
    name: str
    positive: dict[str, int]  # term -> frequency
    negative: frozenset[str]
    length: int


@lru_cache(maxsize=4096)
def profile(skill: ListedSkill) -> SkillProfile:
    positive: dict[str, int] = {}
    negative: set[str] = set()
    name_terms = terms(skill.name.replace("-", " "))
    for t in name_terms:
        positive[t] = positive.get(t, 0) + 1
    for sentence in _SENTENCE.split(skill.description):
        match = _EXCLUSION.search(sentence.lower())
        if match:
            # Words before the exclusion marker still describe the skill; after it, they don't.
            before, after = sentence[: match.start()], sentence[match.end():]
            negative.update(terms(after))
            sentence = before
        for t in terms(sentence):
            positive[t] = positive.get(t, 0) + 1
    negative -= set(name_terms)
    length = sum(positive.values())
    return SkillProfile(skill.name, positive, frozenset(negative), max(length, 1))


@dataclass(frozen=True)
class Params:
    """Calibration of the simulator; exposed as stub backend parameters."""

    slope: float = 1.8
    midpoint: float = 1.6
    exclusion_penalty: float = 1.2
    competitor_temperature: float = 0.6
    k1: float = 1.2
    b: float = 0.3
    typical_length: float = 30.0


@dataclass(frozen=True)
class Decision:
    fired: str | None
    probability: float
    scores: dict[str, float]


def relevance(listing: Sequence[ListedSkill], query: str, params: Params) -> dict[str, float]:
    q = terms(query)
    profiles = [profile(s) for s in listing]
    if not profiles:
        return {}
    # Normalised against a fixed typical description length, not the listing's average:
    # a long description dilutes each match whether or not competitors are listed.
    avg_len = params.typical_length
    q_unique = set(q)
    scores: dict[str, float] = {}
    for prof in profiles:
        norm = params.k1 * (1 - params.b + params.b * prof.length / avg_len)
        score = 0.0
        for t in q_unique:
            tf = prof.positive.get(t)
            if tf:
                score += weight(t) * tf * (params.k1 + 1) / (tf + norm)
            elif t in prof.negative:
                score -= params.exclusion_penalty * weight(t)
        scores[prof.name] = score
    return scores


@lru_cache(maxsize=1024)
def model_shift(model: str) -> float:
    """A small, stable per-model shift of the midpoint in [-0.4, 0.4]."""
    h = int.from_bytes(hashlib.sha256(model.encode()).digest()[:4], "big")
    return (h / 0xFFFFFFFF - 0.5) * 0.8


def uniforms(seed: bytes) -> tuple[float, float]:
    return (int.from_bytes(seed[0:7], "big") / 2**56, int.from_bytes(seed[7:14], "big") / 2**56)


def draw_seed(model: str, listing: Sequence[ListedSkill], query: str, repeat: int) -> bytes:
    """The seed of one simulated sample. Shared by the stub backend and serve-sim, so both
    draw the same outcome for the same (model, listing, query, repeat)."""
    h = hashlib.sha256()
    h.update(model.encode())
    for s in listing:
        h.update(b"\x00" + s.name.encode() + b"\x01" + s.description.encode())
    h.update(b"\x02" + query.encode() + b"\x03" + str(repeat).encode())
    return h.digest()


def decide(listing: Sequence[ListedSkill], query: str, model: str, seed: bytes,
           params: Params = Params()) -> Decision:
    """Decide one sample. Everything but the draw is cached per (listing, query, model)."""
    p, names, cumulative, scores = _prepared(tuple(listing), query, model, params)
    u1, u2 = uniforms(seed)
    if u1 >= p:
        return Decision(None, p, scores)
    for name, edge in zip(names, cumulative):
        if u2 < edge:
            return Decision(name, p, scores)
    return Decision(names[-1], p, scores)


@lru_cache(maxsize=65536)
def _prepared(listing: tuple[ListedSkill, ...], query: str, model: str, params: Params
              ) -> tuple[float, tuple[str, ...], tuple[float, ...], dict[str, float]]:
    """(probability that some skill fires, names, cumulative softmax edges, scores)."""
    scores = relevance(listing, query, params)
    if not scores:
        return 0.0, (), (), scores
    best = max(scores.values())
    mid = params.midpoint + model_shift(model)
    p = 1.0 / (1.0 + math.exp(-params.slope * (best - mid)))
    # Which skill: softmax over relevance; the leader almost always wins unless a rival is close.
    t = params.competitor_temperature
    weights = [(n, math.exp((s - best) / t)) for n, s in scores.items()]
    total = sum(w for _, w in weights)
    acc, edges = 0.0, []
    for _, w in weights:
        acc += w / total
        edges.append(acc)
    return p, tuple(n for n, _ in weights), tuple(edges), scores
