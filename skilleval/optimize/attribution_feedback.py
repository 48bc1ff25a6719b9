"""``optimize.attribution=true``: the incumbent's sentence-attribution table, for the proposer.

Before each proposal round the current description is split into sentences
(`skilleval.trigger.attribution.split_sentences`) and, on the *train* queries only (the
proposer sees nothing held out), each sentence is removed in turn: leave-one-out, the cheap
estimator (``n`` descriptions per table, where Shapley values would need ``2^n``). The
per-query differences give paired intervals over queries, for recall (should-trigger
queries) and for the false-trigger rate (the others).

What it costs, and why it is honest:

* The trials go through the loop's own runner, so every call is reserved from the budget,
  written to the store and counted in the run's calls; this module also keeps its own
  share (`calls_made`, `calls_cached`) for the summary.
* The full description is the incumbent itself (verbatim, not its sentences re-joined), so
  its train trials, paid for by the loop, are reused; a table is built once per incumbent.
* Rates use the ``fixed`` policy with ``trigger.runs`` runs per query: an early-stopped
  (``decided``) rate would bias the differences. Errors and timeouts are left out of a
  query's rate, never counted as "not triggered"; a query with no valid run is left out.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from skilleval.optimize.proposal import Effect, SentenceEffect
from skilleval.trigger import attribution as attr

if TYPE_CHECKING:
    from skilleval.optimize.loop import Optimizer

BOOTSTRAP = 2000


def sentence_count(description: str) -> int:
    return len(attr.split_sentences(description))


@dataclass
class AttributionFeedback:
    calls_made: int = 0
    calls_cached: int = 0
    tables: int = 0
    skipped: int = 0  # incumbents of fewer than two sentences (nothing to attribute)
    _done: dict[str, tuple[SentenceEffect, ...]] = field(default_factory=dict)

    async def table(self, opt: "Optimizer", description: str) -> tuple[SentenceEffect, ...]:
        if description in self._done:
            return self._done[description]
        sentences = attr.split_sentences(description)
        n = len(sentences)
        if n < 2:
            self.skipped += 1
            self._done[description] = ()
            return ()
        runner = opt.runner
        settings = replace(runner.settings, policy="fixed")
        cases = list(opt.split.train)
        positive = np.array([c.should_trigger for c in cases])
        made, cached = runner.calls_made, runner.calls_cached
        rates: list[np.ndarray] = []
        try:
            for i, text in enumerate([description, *(attr.join(sentences, frozenset(range(n)) - {k})
                                                     for k in range(n))]):
                results = await runner.evaluate(opt.skill.with_description(text), cases,
                                                opt.distractors, settings=settings,
                                                label="attribution: all" if i == 0
                                                else f"attribution: without {i}/{n}")
                rates.append(np.array([q.triggers / q.valid_runs if q.valid_runs else np.nan
                                       for q in results]))
        finally:
            self.calls_made += runner.calls_made - made
            self.calls_cached += runner.calls_cached - cached
        full = rates[0]
        conf = settings.confidence
        out = []
        for k, sentence in enumerate(sentences):
            loo = full - rates[k + 1]
            effects = [Effect(*_interval(loo[mask], conf, seed=k)) for mask in (positive, ~positive)]
            out.append(SentenceEffect(k, sentence, effects[0], effects[1]))
        self.tables += 1
        opt.console.print(f"[dim]attribution: {n} sentences on {len(cases)} train queries, "
                          f"{self.calls_made} calls so far ({self.calls_cached} from the cache)[/dim]")
        self._done[description] = tuple(out)
        return self._done[description]

    def summary(self) -> dict[str, Any]:
        """Counts, and every table the proposer was given (by the description it explains)."""
        return {"method": "leave-one-out on train", "tables": self.tables,
                "skipped_single_sentence": self.skipped, "calls_made": self.calls_made,
                "calls_cached": self.calls_cached,
                "by_description": [{"description": d, "sentences": [asdict(e) for e in t]}
                                   for d, t in self._done.items() if t]}


def _interval(per_query: np.ndarray, confidence: float, seed: int
              ) -> tuple[float | None, float | None, float | None, int]:
    mean, lo, hi = attr.paired_interval(per_query, boot=BOOTSTRAP, confidence=confidence, seed=seed)
    return mean, lo, hi, int((~np.isnan(per_query)).sum())
