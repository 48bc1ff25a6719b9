"""What the `embed` backend compares a query with: a description's parts, read like a reader would.

A description is not one meaning. "Clean CSV files. Use when ... Do not use for Excel
workbooks, SQL queries or plotting." says what the skill is for and, just as plainly, what it
is not for. One embedding of the whole text blurs the two, so a query about pivot tables lands
close to the csv skill *because* its description names pivot tables. Here a description is
split into:

- **the positive text**: the name with the description minus its exclusions;
- **exclusion fragments**: clauses that say when *not* to use the skill, recognised by
  ordinary English negation cues at the start of a clause ("do not use", "not for", "never",
  "rather than", "... instead"), and split at commas into their items (so "pivot tables"
  and "SQL queries" are each a fragment).

A skill's score for a query is the similarity to its positive text, lowered when an exclusion
fragment fits the query better (``score = pos - penalty * max(0, neg - pos)``). The cues are
generic language, not a vocabulary of any domain.

**Pre-registered comparison of positive features (written before the widened calibration set
was scored by any model).** Long list-style descriptions ("Use when the user wants to A, B, C,
D ... Do not use for X, Y") may dilute a query that matches one listed use when the whole
positive text is one embedding. The candidate ways to measure a skill's positive similarity
``pos`` (``VARIANTS``; the exclusion penalty stays as above, applied to that ``pos``):

- (a) ``whole``: cosine to the positive text (the model shipped before the widening);
- (b) ``best-item``: the maximum cosine over the positive text and its *items*: each positive
  sentence and each comma-separated item of a positive sentence, of at least two words;
- (c) ``blend``: ``(1 - w) * whole + w * best-item``, with ``w`` in [0, 1] fitted by maximum
  likelihood together with the intercept and slope (refitted inside every fold);
- (d) ``best-item-named``: as (b), but each item is embedded as "name: item", so an item
  taken out of its description still says which skill it belongs to.

Decision rule, fixed in advance: ship the variant with the lowest leave-one-skill-out log loss
on the widened calibration set (``python -m skilleval.backends.embed_calibration`` prints the
table and applies the rule); a difference under 0.001 goes to the variant with fewer fitted
parameters, then to the earlier one in the list above. The acceptance sets play no part.

Evaluated earlier on the 5-skill set and left out: the bare name as a unit and a fitted rather
than fixed exclusion weight (both lost on leave-one-skill-out log loss).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: How hard a better-fitting exclusion pulls a skill's score down, per unit of similarity by
#: which it beats the positive text. A design constant (1: an exclusion that fits the query
#: 0.1 better than the description does costs the skill 0.1), not fitted; chosen over 0 by
#: the calibration set's leave-one-skill-out log loss (0.516 vs 0.534).
EXCLUSION_PENALTY = 1.0

_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
# A clause starts a new, negative thought: ", not a text changelog file", "; never for ...".
_CLAUSE = re.compile(r"[,;:]\s+|\s+[-\u2013\u2014]+\s+")
_NEGATIVE_START = re.compile(
    r"^(?:but\s+)?(?:do\s+not|don't|does\s+not|doesn't|never|not|no\s+need|avoid|rather\s+than|"
    r"instead\s+of|except|unless|skip\s+it)\b", re.IGNORECASE)
_INSTEAD = re.compile(r"\binstead\b\W*$", re.IGNORECASE)  # "... use the pdf skill instead."
_MIN_WORDS = 2


@dataclass(frozen=True)
class DescriptionParts:
    positive: str  # the name + the description without its exclusion clauses
    negative: tuple[str, ...]  # exclusion fragments (may be empty)


def name_words(name: str) -> str:
    return name.replace("-", " ").replace("_", " ")


def _words(text: str) -> int:
    return len(text.split())


def _split_clauses(sentence: str) -> tuple[list[str], list[str]]:
    """(positive part, negative clauses) of one sentence: everything from the first clause
    that opens with a negation cue to the end of the sentence is negative."""
    if _NEGATIVE_START.match(sentence.strip()) or _INSTEAD.search(sentence.strip()):
        return [], [sentence.strip()]
    pieces = _CLAUSE.split(sentence)
    for i, piece in enumerate(pieces):
        if i and _NEGATIVE_START.match(piece.strip()):
            head = ", ".join(p.strip() for p in pieces[:i])
            return [head], [", ".join(p.strip() for p in pieces[i:])]
    return [sentence.strip()], []


@lru_cache(maxsize=4096)
def parse(name: str, description: str) -> DescriptionParts:
    """The positive text and exclusion fragments of one listed skill (see the module docstring)."""
    positive_sentences: list[str] = []
    negative_clauses: list[str] = []
    for sentence in _SENTENCE.split(description.strip()):
        if not sentence.strip():
            continue
        pos, neg = _split_clauses(sentence)
        positive_sentences += [p for p in pos if p]
        negative_clauses += neg
    label = name_words(name)
    whole = f"{label}: {' '.join(positive_sentences)}" if positive_sentences else label
    fragments: list[str] = []
    for clause in negative_clauses:
        fragments.append(clause)
        items = [p.strip(" .") for p in re.split(r",\s*", clause)]
        if len(items) > 1:
            fragments += [p for p in items if _words(p) >= _MIN_WORDS or len(p) >= 6]
    return DescriptionParts(whole, tuple(dict.fromkeys(fragments)))


def skill_scores(listing_parts: list[DescriptionParts], query_vec: np.ndarray,
                 vector: Callable[[str], np.ndarray], penalty: float = EXCLUSION_PENALTY
                 ) -> tuple[list[float], list[float], list[float]]:
    """(score, positive similarity, best exclusion similarity) per listed skill; the exclusion
    similarity is -1 when the description has none."""
    scores, pos_best, neg_best = [], [], []
    for parts in listing_parts:
        pos = float(vector(parts.positive) @ query_vec)
        neg = max((float(vector(t) @ query_vec) for t in parts.negative), default=-1.0)
        scores.append(pos - penalty * max(0.0, neg - pos))
        pos_best.append(pos)
        neg_best.append(neg)
    return scores, pos_best, neg_best


def choice_probabilities(scores: list[float], intercept: float, slope: float) -> list[float]:
    """P(skill i fires) for each listed skill, with "none" as the remaining mass: a softmax
    over the skills' logits ``intercept + slope * score`` and a "none" option of logit 0.
    Claude picks at most one skill; a close rival takes probability from the target."""
    if not scores:
        return []
    logits = [intercept + slope * s for s in scores]
    top = max(0.0, *logits)
    weights = [np.exp(z - top) for z in logits]
    total = float(np.exp(-top) + sum(weights))
    return [float(w) / total for w in weights]
