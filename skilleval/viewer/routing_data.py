"""Data of the Routing run page: the confusion matrix of a ``routing`` run, as a heatmap.

The figures are the run's own (``runs.summary_json["routing"]``, the same numbers as its
results.json): counting them again from ``trials`` would miss the trials the run read from
the store's cache (they belong to earlier runs). Each row also gets its share per column,
the heatmap's colour: a row is one expected skill (or ``none``), and its share is over all
of that row's trials, errors included, so an error column stands out instead of vanishing.
"""
from __future__ import annotations

from typing import Any

from skilleval.viewer.queries import Queries


def routing_page(q: Queries, run_id: str) -> dict[str, Any]:
    run = q.run(run_id) or {}
    r = (run.get("summary") or {}).get("routing")
    if not isinstance(r, dict):
        return {"routing": None}
    columns = [str(c) for c in r.get("columns") or []]
    rows = []
    for expected, cells in (r.get("matrix") or {}).items():
        counts = {c: int((cells or {}).get(c, 0) or 0) for c in columns}
        total = sum(counts.values())
        rows.append({"expected": str(expected), "total": total, "counts": counts,
                     "share": {c: (n / total if total else 0.0) for c, n in counts.items()}})
    return {"routing": {
        "columns": columns, "rows": rows, "skills": r.get("skills") or [],
        "per_skill": r.get("per_skill") or {}, "accuracy": r.get("accuracy"),
        "errors": r.get("errors"), "catalog": r.get("catalog"), "runs": r.get("runs"),
        "unit": r.get("unit", "trials"), "descriptions": r.get("descriptions") or {},
        "confidence": r.get("confidence", 0.95)}}
