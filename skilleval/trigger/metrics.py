"""Trigger metrics over queries and over runs, each with an interval.

Over queries: a should-trigger query that passes is a true positive, one that fails a false
negative; a should-not query that fails (it triggered too often) is a false positive.
Over runs: every valid run of a should-trigger query that triggered is a true positive, and
so on. Queries with too few valid runs are left out and counted as `insufficient`.

F1 is reported with the Wilson interval of 2TP / (2TP + FP + FN), the proportion F1 is
algebraically equal to; it is an approximation, labelled as such in the JSON. Over runs, the
intervals are over queries (`run_metrics`): a query's runs are not independent draws.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from skilleval.stats import Estimate, clustered_estimate, estimate
from skilleval.trigger.runner import QueryResult


@dataclass(frozen=True)
class Confusion:
    tp: int
    fp: int
    tn: int
    fn: int

    def metrics(self, confidence: float) -> dict[str, Estimate]:
        tp, fp, tn, fn = self.tp, self.fp, self.tn, self.fn
        return {
            "precision": estimate(tp, tp + fp, confidence),
            "recall": estimate(tp, tp + fn, confidence),
            "accuracy": estimate(tp + tn, tp + tn + fp + fn, confidence),
            "f1": estimate(2 * tp, 2 * tp + fp + fn, confidence),
        }


@dataclass(frozen=True)
class TriggerSummary:
    queries: dict[str, Estimate]
    runs: dict[str, Estimate]
    query_confusion: Confusion
    run_confusion: Confusion
    total_queries: int
    passed: int
    failed: int
    insufficient: int
    trials: int
    valid_trials: int
    errors: int
    timeouts: int
    fired_other: int
    cached: int
    retries: int = 0
    #: error / timeout message -> trials that ended with it, most frequent first (errors are
    #: never a "no", and a count alone does not say whether it is a 529 storm or a bad key)
    error_kinds: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "queries": {k: v.to_dict() for k, v in self.queries.items()},
            "runs": {k: v.to_dict() for k, v in self.runs.items()},
            "query_confusion": vars(self.query_confusion),
            "run_confusion": vars(self.run_confusion),
            "total_queries": self.total_queries, "passed": self.passed, "failed": self.failed,
            "insufficient": self.insufficient, "trials": self.trials,
            "valid_trials": self.valid_trials, "errors": self.errors, "timeouts": self.timeouts,
            "fired_other": self.fired_other, "cached_trials": self.cached, "retries": self.retries,
            "error_kinds": dict(self.error_kinds),
            "interval": "queries: wilson (f1: wilson on 2TP/(2TP+FP+FN)); runs: wilson on the "
                        "effective sample size of queries (runs of one query are correlated)",
        }


def summarize(results: Sequence[QueryResult], confidence: float = 0.95) -> TriggerSummary:
    qtp = qfp = qtn = qfn = rtp = rfp = rtn = rfn = 0
    passed = failed = insufficient = 0
    for q in results:
        ok = q.passed
        if ok is None:  # left out of both views, so queries and runs cover the same queries
            insufficient += 1
            continue
        t, v = q.triggers, q.valid_runs
        if q.case.should_trigger:
            rtp += t
            rfn += v - t
        else:
            rfp += t
            rtn += v - t
        passed += ok
        failed += not ok
        if q.case.should_trigger:
            qtp += ok
            qfn += not ok
        else:
            qtn += ok
            qfp += not ok
    qc, rc = Confusion(qtp, qfp, qtn, qfn), Confusion(rtp, rfp, rtn, rfn)
    return TriggerSummary(
        queries=qc.metrics(confidence), runs=run_metrics(results, confidence),
        query_confusion=qc, run_confusion=rc, total_queries=len(results),
        passed=passed, failed=failed, insufficient=insufficient,
        trials=sum(q.runs for q in results), valid_trials=sum(q.valid_runs for q in results),
        errors=sum(q.errors for q in results), timeouts=sum(q.timeouts for q in results),
        fired_other=sum(q.fired_other for q in results), cached=sum(q.cached for q in results),
        retries=sum(r.retries for q in results for r in q.results),
        error_kinds=error_kinds(results),
    )


def run_metrics(results: Sequence[QueryResult], confidence: float) -> dict[str, Estimate]:
    """Run-level precision, recall, accuracy and F1: pooled over valid runs, with intervals
    over *queries* (`stats.clustered_estimate`). The runs of one query share the query and
    agree far more often than independent draws, so a Wilson interval over runs would be too
    narrow. Each query contributes its (numerator, denominator) to every ratio."""
    pairs: dict[str, list[tuple[int, int]]] = {"precision": [], "recall": [], "accuracy": [], "f1": []}
    for q in results:
        if q.passed is None:  # insufficient: left out, as in the query view
            continue
        t, v = q.triggers, q.valid_runs
        if q.case.should_trigger:  # t true positives, v - t false negatives
            pairs["precision"].append((t, t))
            pairs["recall"].append((t, v))
            pairs["accuracy"].append((t, v))
            pairs["f1"].append((2 * t, t + v))
        else:  # t false positives, v - t true negatives
            pairs["precision"].append((0, t))
            pairs["accuracy"].append((v - t, v))
            pairs["f1"].append((0, t))
    out = {}
    for name, ps in pairs.items():
        e = clustered_estimate(ps, confidence)
        out[name] = Estimate(e["k"], e["n"], e["low"] if e["n"] else 0.0, e["high"] if e["n"] else 1.0)
    return out


def error_kinds(results: Sequence[QueryResult]) -> dict[str, int]:
    """How many trials ended with each error or timeout message, most frequent first."""
    kinds = Counter(r.error or r.outcome.value for q in results for r in q.results
                    if not r.outcome.valid)
    return dict(kinds.most_common())
