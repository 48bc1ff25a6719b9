"""Data of the Optimisation page, from the ``candidates`` and ``splits`` tables.

The optimiser checkpoints after every iteration (one ``role='iteration'`` row carrying the
whole loop state), so this page is live: each finished iteration shows up on the next poll.
A candidate is diffed word by word against the incumbent *it was compared with*, and the
queries whose verdict differs between the two are listed ("flips").
"""
from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from skilleval.viewer.queries import Queries, interval


def word_diff(old: str, new: str) -> list[list[str]]:
    """[[op, text], ...] with op '=' kept, '-' removed, '+' added (words, not characters)."""
    a, b = old.split(), new.split()
    out: list[list[str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(["=", " ".join(a[i1:i2])])
            continue
        if i2 > i1:
            out.append(["-", " ".join(a[i1:i2])])
        if j2 > j1:
            out.append(["+", " ".join(b[j1:j2])])
    return out


def _passed(outs: list[dict[str, Any]]) -> dict[str, bool]:
    return {o["case_id"]: bool(o["passed"]) for o in outs if not o.get("insufficient")}


def opt_page(q: Queries, run_id: str) -> dict[str, Any]:
    """The page's intervals are at the run's own level (``trigger.confidence``), as its test
    block in results.json is, and the page says which."""
    from skilleval.viewer.trigger_data import run_confidence

    level = run_confidence(q, run_id)

    def ci(passed: dict[str, bool]) -> dict[str, Any]:
        return interval(sum(passed.values()), len(passed), level)

    nothing = {"iterations": [], "candidates": [], "chart": [], "test": None, "confidence": level}
    if "candidates" not in q.tables():
        return nothing
    found = q.table_rows("candidates", run_id, columns="run_key", limit=1)
    if not found:
        return nothing
    run_key = found[0]["run_key"]
    latest = q.sql("""SELECT state_json FROM candidates WHERE run_key = ? AND role = 'iteration'
                      ORDER BY iteration DESC, ts DESC LIMIT 1""", [run_key])
    queries = {r["case_id"]: r for r in q.sql(
        "SELECT DISTINCT case_id, query, split FROM splits WHERE run_key = ?", [run_key])} \
        if "splits" in q.tables() else {}
    if not latest:
        return nothing
    state = json.loads(latest[0]["state_json"])
    entries = state["entries"]
    candidates, chart = [], []
    incumbent = entries[0] if entries else None
    by_iter: dict[int, list[dict[str, Any]]] = {}
    for e in entries:
        by_iter.setdefault(e["iteration"], []).append(e)
    for it in sorted(by_iter):
        group = by_iter[it]
        accepted = None
        for e in group:
            t, v = _passed(e["train"]), _passed(e["validation"])
            base = incumbent if it > 0 else None
            flips = []
            if base is not None:
                bt = {**_passed(base["train"]), **_passed(base["validation"])}
                for cid, ok in {**t, **v}.items():
                    if cid in bt and bt[cid] != ok:
                        qi = queries.get(cid, {})
                        flips.append({"case_id": cid, "query": qi.get("query", cid),
                                      "split": qi.get("split"), "now": "pass" if ok else "fail"})
            candidates.append({
                "iteration": it, "candidate": e["candidate"], "proposer": e["proposer"],
                "description": e["description"], "decision": e["decision"], "p_value": e["p_value"],
                "rank": e.get("rank"), "train": ci(t), "validation": ci(v),
                "diff": word_diff(base["description"], e["description"]) if base else [],
                "flips": flips,
            })
            if str(e["decision"]).startswith("accepted"):
                accepted = e
        if accepted is not None:
            incumbent = accepted
        best = max(group, key=lambda e: (sum(_passed(e["validation"]).values()),
                                         sum(_passed(e["train"]).values())))
        chart.append({"iteration": it, "train": ci(_passed(best["train"])),
                      "validation": ci(_passed(best["validation"])),
                      "incumbent_description": incumbent["description"] if incumbent else None})
    best_entry = entries[state["incumbent"]] if entries else None
    return {"run_key": run_key, "confidence": level, "exit_reason": state.get("exit_reason"),
            "iterations_done": state.get("iteration"), "candidates": candidates, "chart": chart,
            "original": entries[0]["description"] if entries else None,
            "best": best_entry["description"] if best_entry else None,
            "best_diff": word_diff(entries[0]["description"], best_entry["description"])
            if best_entry else [], "test": _test(q, run_id)}


def _test(q: Queries, run_id: str) -> dict[str, Any] | None:
    """Original vs best on the test split, and which of the two the run recommends (the
    description ``optimize.apply=true`` would write), from the run's results.json (written at
    the end)."""
    run = q.run(run_id)
    if not run or not run.get("output_dir"):
        return None
    path = Path(run["output_dir"]) / "results.json"
    try:
        res = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    test = res.get("test") or {}
    out: dict[str, Any] = {"paired": test.get("paired"), "partial": test.get("partial"),
                           "recommended": res.get("recommended")}
    for side in ("original", "best"):
        block = test.get(side)
        if block:
            out[side] = {"score": block.get("score"), "accuracy": block.get("accuracy"),
                         "results": block.get("results")}
    return out
