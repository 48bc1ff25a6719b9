"""The `embed` backend: an offline semantic model (all-MiniLM-L6-v2 sentence embeddings).

Where the `stub` matches words, this one compares meanings, so a paraphrased query still
reaches the skill that describes it. It decides a trial like the stub does, with its own
parts: a probability that some skill fires (calibrated, see `embed_calibration`), then two
uniform numbers drawn from a seed of (model, listing, query, repeat): one against that
probability, one choosing the skill by a softmax over similarities. Same trial, same answer.

Install with ``pip install "skilleval[embed]"``. numpy, tokenizers and the weights are
imported only when the backend is built, so `skilleval plugins` stays fast.
"""
from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from skilleval.backends.base import BaseBackend
from skilleval.domain import ListedSkill, Outcome, Trial, TrialResult


@dataclass
class EmbedParams:
    model: str = "all-MiniLM-L6-v2"
    #: Override the shipped calibration (null: use embed_calibration.json).
    intercept: float | None = None
    slope: float | None = None
    temperature: float | None = None


class EmbedBackend(BaseBackend):
    name = "embed"
    needs_self_check = False
    harness_version = "embed-1"

    def __init__(self, params: EmbedParams) -> None:
        from skilleval.backends.embed_calibration import load_calibration
        from skilleval.backends.embed_cache import EmbeddingCache
        from skilleval.backends.embed_model import MODEL_NAME, shared_encoder
        from skilleval.errors import UserError

        if params.model != MODEL_NAME:
            raise UserError(f"backend.model={params.model!r}: the embed backend ships only {MODEL_NAME!r}")
        self.params = params
        self.model = params.model
        fit = load_calibration()
        self.calibration = fit
        self.intercept = fit["intercept"] if params.intercept is None else float(params.intercept)
        self.slope = fit["slope"] if params.slope is None else float(params.slope)
        self.temperature = fit["temperature"] if params.temperature is None else float(params.temperature)
        if self.temperature <= 0:
            raise UserError(f"backend.temperature must be > 0, got {self.temperature}")
        encoder = shared_encoder()
        self.cache = EmbeddingCache(encoder.encode, MODEL_NAME)
        self.calls = 0
        self._prepared: dict[tuple[tuple[ListedSkill, ...], str], tuple[float, tuple[str, ...], tuple[float, ...]]] = {}

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["calibration"] = [self.intercept, self.slope, self.temperature]
        ident["calibration_data"] = self.calibration["data"]["sha256"][:16]
        return ident

    def use_store(self, root: Path) -> None:
        self.cache.use_dir(root)

    # -- scoring ------------------------------------------------------------------------

    def similarities(self, listing: tuple[ListedSkill, ...], query: str) -> dict[str, float]:
        """Cosine similarity of the query to each listed skill's text."""
        from skilleval.backends.embed_calibration import skill_text

        q = self.cache.get(query)
        return {s.name: float(self.cache.get(skill_text(s.name, s.description)) @ q) for s in listing}

    def probability(self, best: float) -> float:
        z = self.intercept + self.slope * best
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def _prepare(self, listing: tuple[ListedSkill, ...], query: str
                 ) -> tuple[float, tuple[str, ...], tuple[float, ...]]:
        key = (listing, query)
        hit = self._prepared.get(key)
        if hit is not None:
            return hit
        sims = self.similarities(listing, query)
        if not sims:
            prepared: tuple[float, tuple[str, ...], tuple[float, ...]] = (0.0, (), ())
        else:
            best = max(sims.values())
            weights = [math.exp((s - best) / self.temperature) for s in sims.values()]
            total, acc, edges = sum(weights), 0.0, []
            for w in weights:
                acc += w / total
                edges.append(acc)
            prepared = (self.probability(best), tuple(sims), tuple(edges))
        self._prepared[key] = prepared
        return prepared

    def decide(self, listing: tuple[ListedSkill, ...], query: str, repeat: int) -> str | None:
        p, names, edges = self._prepare(listing, query)
        u1, u2 = _uniforms(self.model, listing, query, repeat)
        if u1 >= p or not names:
            return None
        for name, edge in zip(names, edges):
            if u2 < edge:
                return name
        return names[-1]

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
    """Two uniforms in [0, 1) from a hash of the trial's content (its repeat index included)."""
    h = hashlib.blake2b(digest_size=16, person=b"skilleval-embed")
    h.update(model.encode())
    for s in listing:
        h.update(b"\x00" + s.name.encode() + b"\x01" + s.description.encode())
    h.update(b"\x02" + query.encode() + b"\x03" + str(repeat).encode())
    d = h.digest()
    return int.from_bytes(d[:8], "big") / 2**64, int.from_bytes(d[8:], "big") / 2**64
