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
on the widened (300-row) calibration set (``python -m skilleval.backends.embed_calibration``
prints the table and applies the rule); a difference under 0.001 goes to the variant with fewer fitted
parameters, then to the earlier one in the list above. The acceptance sets play no part.

Result (300 rows, 12 held-out skills; in-sample / LOSO log loss, LOSO accuracy): (a) whole
0.527 / 0.548, 0.710; (b) best-item 0.513 / 0.537, 0.730; (c) blend (w = 0.54) 0.498 /
0.531, 0.737; (d) best-item-named 0.528 / 0.548, 0.693. (b), (c) and (d) each lower the
held-out loss of 8 of the 12 skills against (a). Shipped then: (c) ``blend``.

**Second pre-registered comparison: the exclusion evidence (written before any of it was
fitted or scored, and before the calibration set was widened a second time).** Hypothesis, from
the failure *kinds* seen on the acceptance sets (not their queries): queries that a
description excludes, or that share its nouns but ask for another job, score too high. Two
steps, fixed in advance:

1. *Data.* The calibration set is widened with skills written for it in domains far from
   every acceptance set, whose near-miss negatives are of the hard kinds: they share the
   skill's nouns but ask for a different job, ask a knowledge question about the domain, ask
   for a neighbouring tool's task, or ask for what the description excludes (10 should trigger,
   10 near-misses each). Queries and descriptions are written, and committed, before any model
   scores them; the widened set is adopted whatever it does to the figures (a data change is
   not chosen by its score). Every variant, ``blend`` included, is refitted on it.
2. *Variants* (added to ``VARIANTS``; each keeps the ``blend`` positive feature with its
   fitted ``w``):

   - (e) ``blend-margin``: the exclusion penalty starts before an exclusion fits *better*:
     ``score = pos - max(0, neg - pos + m)``, the margin ``m`` fitted (4 parameters), so an
     exclusion that fits nearly as well as the description already costs the skill;
   - (f) ``blend-item-margin``: as (e), but the exclusion fragment is compared with the best
     positive *item* (like with like: one short fragment against one short item) rather than
     with the blended positive similarity: ``score = pos - max(0, neg - best + m)``, ``m``
     fitted (4 parameters);
   - (g) ``blend-exclusion-rival``: no penalty; instead each listed skill's best exclusion
     fragment enters Claude's choice as a rival option with logit
     ``intercept + slope * neg`` (the same calibration as a skill), whose mass means "the
     skill does not fire" ("Do not use for X" read as X being listed elsewhere) (3 parameters).

Decision rule, unchanged and fixed in advance: over the whole table ((a)-(d) and (e)-(g)),
ship the variant with the lowest leave-one-skill-out log loss on the widened set; a
difference under 0.001 goes to fewer fitted parameters, then to the earlier variant. If
``blend`` stays lowest, it ships (refitted on the widened set). The acceptance sets play no
part; the acceptance benchmark is run once, after this choice is committed.

Result (380 rows, 16 held-out skills; in-sample / LOSO log loss, LOSO accuracy; k fitted
parameters): (a) whole 0.577 / 0.584, 0.692 (k=2); (b) best-item 0.570 / 0.584, 0.682 (2);
(c) blend (w = 0.55) 0.557 / **0.573**, 0.687 (3); (d) best-item-named 0.578 / 0.592, 0.666
(2); (e) blend-margin (m = 0.028) 0.556 / 0.574, 0.692 (4); (f) blend-item-margin
(m = 0.057) 0.556 / 0.574, 0.687 (4); (g) blend-exclusion-rival 0.583 / 0.602, 0.658 (3).
No exclusion variant beats ``blend`` held out (the margins lower the in-sample loss by 0.001
and raise the held-out loss by 0.0005-0.0007; the rival option is worse), so the rule keeps
(c) ``blend``, refitted on the widened set (intercept -0.70, slope 8.05, w = 0.55; on the
300-row set it was -1.80, 10.73, 0.54). The hypothesis that the exclusion evidence was too
weak is not supported by the calibration data. Acceptance run afterwards (once,
``benchmarks/embed_accuracy.py --runs 9``), embed vs stub query accuracy: changelog-writer
0.60 vs 0.50, csv-tidy 0.85 vs 0.90, bank-reconciliation 0.70 vs 0.70, the new unseen
dog-trainer 0.55 vs 0.40; no paired difference significant; issue 14's acceptance line 1 is
not met.

**Third pre-registered comparison: lexical evidence** (hybrid dense + term-matching
scoring; variant (h) ``blend-lexical``): the hypothesis, the feature, its parameters and the
unchanged decision rule are written in ``embed_lexical``'s docstring, committed before the
variant was implemented or scored. Result: (h) LOSO log loss 0.577 against ``blend``'s 0.573
(in-sample 0.556 vs 0.557); the rule keeps ``blend``; the full table is in that docstring.

**Fourth attempt: a larger calibration set** (``embed_calibration``'s docstring): eight new
skills, 540 rows, 24 held-out skills; the same variants and the same rule. Result (in-sample /
LOSO log loss, LOSO accuracy): (a) whole 0.574 / 0.577, 0.691; (b) best-item 0.567 / 0.575,
0.687; (c) blend 0.557 / 0.566, 0.685; (d) best-item-named 0.568 / 0.576, 0.678; (e)
blend-margin 0.550 / 0.564, 0.691; (f) blend-item-margin (w = 0.56, m = 0.115) 0.549 /
**0.560**, 0.698; (g) blend-exclusion-rival 0.566 / 0.578, 0.681; (h) blend-lexical 0.557 /
0.568, 0.685. The rule now ships (f) ``blend-item-margin``: with more skills the fitted
margin grew (0.057 -> 0.115) and the exclusion evidence pays off held out.

**Fifth pre-registered attempt: a learned diagonal metric** (variants (i)-(k), ``diag-*``):
hypothesis, model, penalties and the unchanged rule are in ``embed_metric``'s docstring,
committed before they were implemented or scored. Result: LOSO log loss 2.349 / 1.041 / 0.565
for L2 strengths 0.01 / 0.1 / 1 against (f)'s 0.560 (in-sample as low as 0.217: it overfits
24 skills); the rule keeps (f) ``blend-item-margin`` unchanged.

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
#: the 5-skill calibration set's leave-one-skill-out log loss, and still lower on the 300-row
#: set with the shipped ``blend`` feature (0.531 vs 0.561 with no penalty). A fitted margin
#: and a rival-option form were compared on the 380-row set and did not beat it (docstring);
#: on the 540-row set the fitted item margin does and ships, on top of this penalty.
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
    items: tuple[str, ...] = ()  # positive sentences and comma-items (>= 2 words), see VARIANTS
    label: str = ""  # the name as words


#: How an exclusion fragment counts (see the second pre-registered comparison above):
#: ``hinge`` lowers the score by how far it fits better than ``pos`` (less a margin),
#: ``hinge-item`` compares it with the best positive item instead, ``rival`` adds it to the
#: choice as an option whose mass means "the skill does not fire".
EXCLUSION_MODES = ("hinge", "hinge-item", "rival")


@dataclass(frozen=True)
class FeatureVariant:
    """How a skill's positive similarity is measured and how its exclusions count (the
    pre-registered candidates above)."""
    name: str
    item_weight: float | None  # weight of the best-item similarity; None: fitted
    named_items: bool = False  # embed items as "name: item"
    exclusion: str = "hinge"  # one of EXCLUSION_MODES
    fit_margin: bool = False  # the hinge's margin m is fitted (else 0)
    lexical: bool = False  # add lam * lexical evidence (embed_lexical), lam fitted
    metric_l2: float | None = None  # a fitted diagonal metric with this L2 strength (embed_metric)

    @property
    def uses_items(self) -> bool:
        return self.item_weight is None or self.item_weight > 0 or self.exclusion == "hinge-item"

    @property
    def parameters(self) -> int:
        """Fitted parameters: intercept and slope, plus the item weight, the margin, the
        lexical weight and the diagonal metric's dimension weights where fitted."""
        return (2 + (self.item_weight is None) + self.fit_margin + self.lexical
                + (DIMENSIONS if self.metric_l2 is not None else 0))


#: Dimensions of the shipped encoder's vectors: the number of weights a learned diagonal
#: metric (``embed_metric``) fits.
DIMENSIONS = 384

VARIANTS: dict[str, FeatureVariant] = {v.name: v for v in (
    FeatureVariant("whole", 0.0), FeatureVariant("best-item", 1.0),
    FeatureVariant("blend", None), FeatureVariant("best-item-named", 1.0, named_items=True),
    FeatureVariant("blend-margin", None, fit_margin=True),
    FeatureVariant("blend-item-margin", None, exclusion="hinge-item", fit_margin=True),
    FeatureVariant("blend-exclusion-rival", None, exclusion="rival"),
    FeatureVariant("blend-lexical", None, lexical=True),
    *(FeatureVariant(f"diag-{lam:g}", None, exclusion="hinge-item", fit_margin=True, metric_l2=lam)
      for lam in (0.01, 0.1, 1.0)))}


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


def _items(sentences: list[str], whole: str) -> tuple[str, ...]:
    """Each positive sentence and each comma-item of one, of at least two words."""
    found: list[str] = []
    for sentence in sentences:
        found.append(sentence.strip())
        pieces = [p.strip(" .") for p in re.split(r",\s*", sentence)]
        if len(pieces) > 1:
            found += pieces
    return tuple(t for t in dict.fromkeys(found) if _words(t) >= _MIN_WORDS and t != whole)


@lru_cache(maxsize=4096)
def parse(name: str, description: str) -> DescriptionParts:
    """The positive text, exclusion fragments and positive items of one listed skill (see the
    module docstring)."""
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
    return DescriptionParts(whole, tuple(dict.fromkeys(fragments)),
                            _items(positive_sentences, whole), label)


def similarities(listing_parts: list[DescriptionParts], query_vec: np.ndarray,
                 vector: Callable[[str], np.ndarray], variant: FeatureVariant | None = None
                 ) -> tuple[list[float], list[float], list[float]]:
    """(whole-text similarity, best-item similarity, best exclusion similarity) per listed
    skill. Best-item is the maximum over the positive text and its items (equal to the
    whole-text similarity when the variant uses no items); exclusion is -1 when there is none."""
    whole, best, neg = [], [], []
    for parts in listing_parts:
        pos = float(vector(parts.positive) @ query_vec)
        top = pos
        if variant is not None and variant.uses_items:
            prefix = f"{parts.label}: " if variant.named_items else ""
            top = max([pos, *(float(vector(prefix + t) @ query_vec) for t in parts.items)])
        whole.append(pos)
        best.append(top)
        neg.append(max((float(vector(t) @ query_vec) for t in parts.negative), default=-1.0))
    return whole, best, neg


def combine(whole: np.ndarray, best: np.ndarray, neg: np.ndarray, item_weight: float,
            penalty: float = EXCLUSION_PENALTY, margin: float = 0.0, exclusion: str = "hinge",
            lex: np.ndarray | None = None, lex_weight: float = 0.0) -> np.ndarray:
    """Scores from similarities (arrays of any shape): ``pos`` mixes whole-text and best-item
    similarity, then an exclusion that fits better than ``pos`` (``hinge``) or than the best
    item (``hinge-item``), less ``margin``, lowers it. Under ``rival`` the score is ``pos``:
    the exclusion acts in the choice instead (``choice_probabilities``). ``lex`` (the
    ``blend-lexical`` variant, ``embed_lexical``) adds ``lex_weight * lex`` after the hinge,
    which compares dense similarities only."""
    pos = mix(whole, best, item_weight)
    if exclusion == "rival":
        score = pos
    else:
        against = best if exclusion == "hinge-item" else pos
        score = pos - penalty * np.maximum(0.0, neg - against + margin)
    return score if lex is None else score + lex_weight * lex


def mix(whole: np.ndarray, best: np.ndarray, item_weight: float) -> np.ndarray:
    """The positive similarity: whole-text and best-item similarity mixed by ``item_weight``."""
    return (1.0 - item_weight) * whole + item_weight * best


def skill_scores(listing_parts: list[DescriptionParts], query_vec: np.ndarray,
                 vector: Callable[[str], np.ndarray], penalty: float = EXCLUSION_PENALTY,
                 item_weight: float = 0.0, named_items: bool = False, margin: float = 0.0,
                 exclusion: str = "hinge", lex: list[float] | None = None, lex_weight: float = 0.0
                 ) -> tuple[list[float], list[float], list[float]]:
    """(score, positive similarity, best exclusion similarity) per listed skill; ``lex`` is
    the lexical evidence per listed skill (``embed_lexical``), weighted by ``lex_weight``."""
    variant = FeatureVariant("shipped", item_weight, named_items, exclusion)
    whole, best, neg = (np.asarray(v) for v in similarities(
        listing_parts, query_vec, vector, variant if variant.uses_items else None))
    scores = combine(whole, best, neg, item_weight, penalty, margin, exclusion,
                     None if lex is None else np.asarray(lex), lex_weight)
    pos = mix(whole, best, item_weight)
    return [float(x) for x in scores], [float(x) for x in pos], [float(x) for x in neg]


def choice_probabilities(scores: list[float], intercept: float, slope: float,
                         rivals: list[float] | None = None) -> list[float]:
    """P(skill i fires) for each listed skill, with "none" as the remaining mass: a softmax
    over the skills' logits ``intercept + slope * score`` and a "none" option of logit 0.
    Claude picks at most one skill; a close rival takes probability from the target.
    ``rivals`` (the ``rival`` exclusion mode): each skill's best exclusion similarity joins
    the softmax as a further option of logit ``intercept + slope * neg`` that fires nothing
    (no option for a skill without exclusions, ``neg`` = -1)."""
    if not scores:
        return []
    logits = [intercept + slope * s for s in scores]
    extra = [intercept + slope * n for n in (rivals or []) if n > NO_EXCLUSION]
    top = max(0.0, *logits, *extra)
    weights = [np.exp(z - top) for z in logits]
    total = float(np.exp(-top) + sum(weights) + sum(np.exp(z - top) for z in extra))
    return [float(w) / total for w in weights]


def target_log_loss(z: np.ndarray, labels: np.ndarray, rivals: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The calibration's likelihood, vectorised: per-row log loss of ``labels`` (the target,
    column 0 of the listed skills' logits ``z`` (rows, listed), fired or not) under the choice
    of ``choice_probabilities``, and each listed skill's probability (rows, listed).
    ``rivals`` (rows, k): logits of further options that fire nothing (-inf: no option), as
    the ``rival`` exclusion mode adds them. One place for the fit of every variant
    (``embed_calibration``) and the learned metric's gradient (``embed_metric``)."""
    top = np.maximum(0.0, z.max(axis=1))
    ez = np.exp(z - top[:, None])
    denom = np.exp(-top) + ez.sum(axis=1)
    if rivals is not None:
        denom = denom + np.exp(np.minimum(rivals - top[:, None], 50.0)).sum(axis=1)
    log_p = z[:, 0] - top - np.log(denom)
    log_q = np.log1p(-np.minimum(np.exp(log_p), 1 - 1e-12))
    return -np.where(labels, log_p, log_q), ez / denom[:, None]


#: The exclusion similarity of a skill whose description has no exclusion clause.
NO_EXCLUSION = -1.0
