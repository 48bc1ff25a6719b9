"""Helpers for the issue-8 trust tests: skill-creator's own arithmetic, re-done from a file."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "experiments"


def skill_creator_run_metrics(results: Iterable[dict[str, Any]]) -> dict[str, float]:
    """What skill-creator prints from a `results` list (reference §5.3 step 3): per-run
    counts, TP = triggers on positives, FP = triggers on negatives, the rest of each query's
    `runs` are misses / correct rejections; precision and recall are 1.0 on an empty
    denominator. `trigger_rate` is `triggers / runs` (§4.5)."""
    tp = fp = tn = fn = 0
    for r in results:
        if r["should_trigger"]:
            tp += r["triggers"]
            fn += r["runs"] - r["triggers"]
        else:
            fp += r["triggers"]
            tn += r["runs"] - r["triggers"]
    total = tp + fp + tn + fn
    return {"precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + fn) if tp + fn else 1.0,
            "accuracy": (tp + tn) / total if total else 0.0}


def skill_creator_pass(r: dict[str, Any], threshold: float = 0.5) -> bool:
    rate = r["triggers"] / r["runs"]
    return rate >= threshold if r["should_trigger"] else rate < threshold
