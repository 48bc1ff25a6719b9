"""The `embed` backend: an offline semantic model (all-MiniLM-L6-v2 sentence embeddings).

Where the `stub` matches words, this one compares meanings, so a paraphrased query still
reaches the skill that describes it. Each listed skill is scored from its description's parts
(`embed_features`: what it is for, and its exclusion clauses as negative evidence), and Claude's
choice is modelled as picking at most one of the listed skills or none (a softmax with a
"none" option, calibrated on a labelled set disjoint from the acceptance sets, see
`embed_calibration`). One uniform number drawn from a seed of (model, listing, query,
repeat) picks the outcome. Same trial, same answer.

Install with ``pip install "skilleval[embed]"``. numpy, tokenizers and the weights are
imported only when the backend is built, so `skilleval plugins` stays fast.
"""
from __future__ import annotations

import hashlib
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from skilleval.backends.base import BaseBackend
from skilleval.backends.params import EmbedParams
from skilleval.domain import ListedSkill, Outcome, Trial, TrialResult


class EmbedBackend(BaseBackend):
    name = "embed"
    needs_self_check = False
    # embed-3: best-item blend feature; embed-4: calibration set grown to 24 skills (bumped when
    # a new variant or a new calibration ships)
    harness_version = "embed-4"

    def __init__(self, params: EmbedParams) -> None:
        import numpy as np

        from skilleval.backends.embed_cache import EmbeddingCache
        from skilleval.backends.embed_calibration import load_calibration
        from skilleval.backends.embed_model import MODEL_NAME, shared_encoder
        from skilleval.errors import UserError

        if params.model != MODEL_NAME:
            raise UserError(f"backend.model={params.model!r}: the embed backend ships only {MODEL_NAME!r}")
        self.params = params
        self.model = params.model
        fit = load_calibration()
        self.calibration = fit
        from skilleval.checks import checked_number

        self.intercept = fit["intercept"] if params.intercept is None else \
            checked_number("backend.intercept", params.intercept, float)
        self.slope = fit["slope"] if params.slope is None else \
            checked_number("backend.slope", params.slope, float)
        if self.slope < 0:
            raise UserError(f"backend.slope must be >= 0, got {self.slope}")
        self.penalty = float(fit["exclusion_penalty"])
        # The positive-feature variant the calibration chose (a fit made before variants: whole text).
        self.item_weight = float(fit.get("item_weight", 0.0))
        self.named_items = bool(fit.get("named_items", False))
        # How exclusions count (a fit made before exclusion modes: the hinge with no margin).
        self.exclusion = str(fit.get("exclusion", "hinge"))
        self.margin = float(fit.get("margin", 0.0))
        # Weight of the lexical evidence (embed_lexical); 0 for a fit without it.
        self.lexical_weight = float(fit.get("lexical_weight", 0.0))
        self._center = np.asarray(fit["center"], dtype=np.float32)
        # A learned diagonal metric (embed_metric): the query vector is weighted once per query.
        weights = fit.get("dimension_weights")
        self._metric = None if weights is None else np.asarray(weights, dtype=np.float32)
        encoder = shared_encoder()
        self.cache = EmbeddingCache(encoder.encode, MODEL_NAME)
        self.calls = 0
        self._unit: dict[str, Any] = {}
        self._prepared: dict[tuple[tuple[ListedSkill, ...], str], tuple[tuple[str, ...], tuple[float, ...]]] = {}

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["calibration"] = [self.intercept, self.slope, self.penalty]
        ident["calibration_data"] = self.calibration["data"]["sha256"][:16]
        ident["features"] = [self.calibration.get("variant", "whole"), self.item_weight, self.named_items,
                             self.exclusion, self.margin]
        if self.lexical_weight:  # only then, so a fit without lexical evidence keeps its identity
            ident["features"].append(self.lexical_weight)
        if self._metric is not None:  # likewise for a learned metric
            ident["features"].append(hashlib.sha256(self._metric.tobytes()).hexdigest()[:16])
        return ident

    def use_store(self, root: Path) -> None:
        self.cache.use_dir(root)

    # -- scoring ------------------------------------------------------------------------

    def vector(self, text: str) -> Any:
        """The text's embedding with the calibration mean removed, unit length (memoised)."""
        vec = self._unit.get(text)
        if vec is None:
            import numpy as np

            v = self.cache.get(text) - self._center
            vec = (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)
            self._unit[text] = vec
        return vec

    def scores(self, listing: tuple[ListedSkill, ...], query: str) -> dict[str, float]:
        """Each listed skill's score for the query (see `embed_features.skill_scores`)."""
        return self._scored(listing, query)[0]

    def _scored(self, listing: tuple[ListedSkill, ...], query: str
                ) -> tuple[dict[str, float], list[float]]:
        """(score per listed skill, best exclusion similarity per listed skill)."""
        from skilleval.backends.embed_features import parse, skill_scores
        from skilleval.backends.embed_lexical import listing_evidence

        parts = [parse(s.name, s.description) for s in listing]
        lex = None
        if self.lexical_weight:
            lex = list(listing_evidence(query, tuple((s.name, s.description, p.positive)
                                                     for s, p in zip(listing, parts, strict=True))))
        query_vec = self.vector(query) if self._metric is None else self.vector(query) * self._metric
        values, _, neg = skill_scores(parts, query_vec, self.vector, self.penalty,
                                      self.item_weight, self.named_items, self.margin, self.exclusion,
                                      lex, self.lexical_weight)
        return {s.name: v for s, v in zip(listing, values)}, neg

    def similarities(self, listing: tuple[ListedSkill, ...], query: str) -> dict[str, float]:
        """Centred cosine similarity of the query to each listed skill's positive text."""
        from skilleval.backends.embed_features import parse

        q = self.vector(query)
        return {s.name: float(self.vector(parse(s.name, s.description).positive) @ q) for s in listing}

    def choice(self, listing: tuple[ListedSkill, ...], query: str) -> dict[str, float]:
        """P(each listed skill fires); the rest of the mass is "none fires"."""
        names, edges = self._prepare(listing, query)
        probs, prev = {}, 0.0
        for name, edge in zip(names, edges):
            probs[name] = edge - prev
            prev = edge
        return probs

    def _prepare(self, listing: tuple[ListedSkill, ...], query: str
                 ) -> tuple[tuple[str, ...], tuple[float, ...]]:
        key = (listing, query)
        hit = self._prepared.get(key)
        if hit is not None:
            return hit
        from skilleval.backends.embed_features import choice_probabilities

        scores, neg = self._scored(listing, query)
        rivals = neg if self.exclusion == "rival" else None
        probs = choice_probabilities(list(scores.values()), self.intercept, self.slope, rivals)
        acc, edges = 0.0, []
        for p in probs:
            acc += p
            edges.append(acc)
        prepared = (tuple(scores), tuple(edges))
        self._prepared[key] = prepared
        return prepared

    def decide(self, listing: tuple[ListedSkill, ...], query: str, repeat: int) -> str | None:
        names, edges = self._prepare(listing, query)
        u = _uniforms(self.model, listing, query, repeat)[0]
        for name, edge in zip(names, edges):
            if u < edge:
                return name
        return None  # the "none" option

    async def run_trial(self, trial: Trial) -> TrialResult:
        start = time.perf_counter()
        self.calls += 1
        fired = self.decide(trial.listing, trial.query, trial.repeat)
        outcome = Outcome.TRIGGERED if fired == trial.target else Outcome.NOT_TRIGGERED
        return TrialResult(
            key=trial.key, outcome=outcome, fired=fired, position=0 if fired else None,
            latency_ms=(time.perf_counter() - start) * 1000, backend_version=self.harness_version,
            shown=tuple(s.name for s in trial.listing),
        )

    def estimate_cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        return 0.0  # runs locally


@lru_cache(maxsize=65536)
def _uniforms(model: str, listing: tuple[ListedSkill, ...], query: str, repeat: int
              ) -> tuple[float, float]:
    """Two uniforms in [0, 1) from a hash of the trial's content (its repeat index included);
    the first picks the outcome, the second is kept for callers that need another draw."""
    h = hashlib.blake2b(digest_size=16, person=b"skilleval-embed")
    h.update(model.encode())
    for s in listing:
        h.update(b"\x00" + s.name.encode() + b"\x01" + s.description.encode())
    h.update(b"\x02" + query.encode() + b"\x03" + str(repeat).encode())
    d = h.digest()
    return int.from_bytes(d[:8], "big") / 2**64, int.from_bytes(d[8:], "big") / 2**64
