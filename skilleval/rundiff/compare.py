"""The diff of two runs of the same kind, as a plain dict (the JSON output and the table's
source).

Trigger runs are paired by query text (with its expectation): a query that passes in one
run and fails in the other has *flipped*. The accuracy delta and the exact McNemar test are
over the queries with a verdict in both runs; recall is over the should-trigger ones among
them, precision over the queries either run fired on. Functional runs are paired by eval,
per arm.
"""
from __future__ import annotations

from typing import Any

from skilleval.errors import UserError
from skilleval.rundiff.sources import QueryRow, RunData
from skilleval.stats import (bootstrap_ci_clustered, independent_diff_interval, mcnemar_exact,
                             paired_diff_interval, paired_ratio_delta,
                             stratified_permutation_p)


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None or x != x else round(x, nd)


def _interval(t: tuple[float | None, float, float]) -> dict[str, float | None]:
    return {"delta": _r(t[0]), "low": _r(t[1]), "high": _r(t[2])}


def shared_keys(a: list[Any], b: list[Any], what: str, common: bool,
                notes: list[str]) -> list[Any]:
    """Keys present in both, in A's order; refuses unequal sets unless `common`."""
    sa, sb = set(a), set(b)
    whats = "queries" if what == "query" else f"{what}s"
    if sa != sb:
        only_a, only_b = len(sa - sb), len(sb - sa)
        if not common:
            raise UserError(f"the runs are over different {whats} ({only_a} only in A, {only_b} only "
                            f"in B, {len(sa & sb)} shared); pass --common to compare the shared ones")
        notes.append(f"--common: comparing the {len(sa & sb)} shared {whats} "
                     f"({only_a} only in A and {only_b} only in B left out)")
    keys = [k for k in dict.fromkeys(a) if k in sb]
    if not keys:
        raise UserError(f"the runs share no {what}")
    return keys


def _qkey(q: QueryRow) -> tuple[str, bool]:
    return (q.query, q.should_trigger)


def diff(a: RunData, b: RunData, *, common: bool = False, confidence: float = 0.95) -> dict[str, Any]:
    if a.kind != b.kind:
        raise UserError(f"cannot compare a {a.kind} run ({a.label}) with a {b.kind} run ({b.label})")
    out = trigger_diff(a, b, common, confidence) if a.kind == "trigger" else \
        functional_diff(a, b, common, confidence)
    out["notes"] = [*a.notes, *b.notes, *out.get("notes", [])]
    return out


def _side(d: RunData) -> dict[str, Any]:
    return {"label": d.label, "run_id": d.run_id, "skill": d.skill, "description": d.description}


def trigger_diff(a: RunData, b: RunData, common: bool, confidence: float) -> dict[str, Any]:
    notes: list[str] = []
    for side in (a, b):
        dupes = len(side.queries) - len({_qkey(q) for q in side.queries})
        if dupes:
            raise UserError(f"{side.label}: {dupes} query(ies) appear twice; a diff needs one row per query")
    qa, qb = {_qkey(q): q for q in a.queries}, {_qkey(q): q for q in b.queries}
    keys = shared_keys([_qkey(q) for q in a.queries], [_qkey(q) for q in b.queries], "query", common, notes)
    queries, flipped = [], []
    cells = {"both": 0, "a_only": 0, "b_only": 0, "neither": 0}
    pos = {"both": 0, "a_only": 0, "b_only": 0, "neither": 0}
    prec_a: list[tuple[int, int]] = []
    prec_b: list[tuple[int, int]] = []
    insufficient = 0
    for k in keys:
        x, y = qa[k], qb[k]
        change = independent_diff_interval(x.triggers, x.valid_runs, y.triggers, y.valid_runs, confidence)
        if x.passed is None or y.passed is None:
            status = "insufficient"
            insufficient += 1
        else:
            status = {(True, True): "pass", (False, False): "fail", (True, False): "regressed",
                      (False, True): "fixed"}[(x.passed, y.passed)]
            cell = {"pass": "both", "fail": "neither", "regressed": "a_only", "fixed": "b_only"}[status]
            cells[cell] += 1
            if x.should_trigger:
                pos[cell] += 1
            # precision: per query, (true positive, fired) — a should-not query that "failed" fired
            prec_a.append(_fired(x))
            prec_b.append(_fired(y))
        row = {"query": x.query, "should_trigger": x.should_trigger, "status": status,
               "before": _qside(x), "after": _qside(y), "rate_change": _interval(change)}
        queries.append(row)
        if status in ("regressed", "fixed"):
            flipped.append(row)
    n = sum(cells.values())
    b_, c_ = cells["a_only"], cells["b_only"]
    accuracy = paired_diff_interval(cells["both"], b_, c_, cells["neither"], confidence)
    recall = paired_diff_interval(pos["both"], pos["a_only"], pos["b_only"], pos["neither"], confidence)
    precision, precision_method = paired_ratio_delta(prec_a, prec_b, confidence=confidence)
    if insufficient:
        notes.append(f"{insufficient} query(ies) without a verdict in one run (too few valid runs) "
                     "are left out of the test and the deltas")
    for name, rows in (("A", qa), ("B", qb)):
        stopped = sum(rows[k].early_stopped for k in keys)
        if stopped:
            notes.append(f"{name}: {stopped} query(ies) stopped early (adaptive policy): their "
                         "rates and rate changes are early-stopped (biased); verdicts, flips, "
                         "McNemar and the accuracy/precision/recall deltas are exact")
    ta = {qa[k].threshold for k in keys} - {None}
    tb = {qb[k].threshold for k in keys} - {None}
    if ta and tb and ta != tb:
        notes.append(f"the runs used different thresholds (A {', '.join(map(str, sorted(ta)))}, "
                     f"B {', '.join(map(str, sorted(tb)))}): a flip may come from the threshold, "
                     "not from a change in triggering")
    notes.extend(setting_notes(a, b))
    return {
        "kind": "trigger", "a": _side(a), "b": _side(b), "confidence": confidence,
        "compared": len(keys), "paired": n, "insufficient": insufficient,
        "flipped": {"fixed": [r for r in flipped if r["status"] == "fixed"],
                    "regressed": [r for r in flipped if r["status"] == "regressed"]},
        "mcnemar": {"fixed": c_, "regressed": b_, "p_value": _r(mcnemar_exact(b_, c_), 6),
                    "method": "exact two-sided binomial test on the flipped queries"},
        "deltas": {
            "accuracy": {**_interval(accuracy), "before": _r((cells["both"] + b_) / n) if n else None,
                         "after": _r((cells["both"] + c_) / n) if n else None,
                         "method": "Tango paired score interval"},
            "recall": {**_interval(recall), "method": "Tango paired score interval (should-trigger queries)"},
            "precision": {**_interval(precision), "method": precision_method},
        },
        "queries": queries, "notes": notes,
    }


def setting_notes(a: RunData, b: RunData) -> list[str]:
    """One note per verdict-shaping setting the two runs both record and differ in: a query
    that flips (or a rate that moves) may owe it to that, not to the description. (The
    threshold has its own note above, from the per-query rows.)"""
    out = []
    for key in ("backend", "model", "policy"):
        x, y = a.settings.get(key), b.settings.get(key)
        if x is not None and y is not None and x != y:
            out.append(f"the runs differ in {key} (A {x}, B {y}): flips and rate changes may come "
                       f"from the {key}, not the description")
    return out


def _fired(q: QueryRow) -> tuple[int, int]:
    """(true positives, fired) of one query at the query level: a should-trigger query that
    passed fired correctly; a should-not query that failed fired wrongly."""
    if q.should_trigger:
        return (1, 1) if q.passed else (0, 0)
    return (0, 0) if q.passed else (0, 1)


def _qside(q: QueryRow) -> dict[str, Any]:
    return {"rate": _r(q.rate), "triggers": q.triggers, "valid_runs": q.valid_runs,
            "errors": q.errors, "timeouts": q.timeouts, "early_stopped": q.early_stopped,
            "verdict": "insufficient" if q.passed is None else ("pass" if q.passed else "fail")}


def functional_diff(a: RunData, b: RunData, common: bool, confidence: float) -> dict[str, Any]:
    notes: list[str] = []
    arms = [arm for arm in a.evals if arm in b.evals]
    if not arms:
        raise UserError(f"the runs share no arm (A: {sorted(a.evals)}, B: {sorted(b.evals)})")
    evals_a = sorted({e for arm in arms for e in a.evals[arm]})
    evals_b = sorted({e for arm in arms for e in b.evals[arm]})
    evals = shared_keys(evals_a, evals_b, "eval", common, notes)
    out_arms = {}
    compared: dict[str, int] = {}
    for arm in arms:
        ea = {e: a.evals[arm].get(e, []) for e in evals}
        eb = {e: b.evals[arm].get(e, []) for e in evals}
        # an eval with no valid run on one side enters no statistic: said, and not counted
        both = [e for e in evals if ea[e] and eb[e]]
        compared[arm] = len(both)
        left = [e for e in evals if e not in both]
        if left:
            notes.append(f"arm {arm}: {len(left)} of {len(evals)} evals have no valid run in "
                         f"{'both runs' if all(not ea[e] and not eb[e] for e in left) else 'one run'} "
                         f"and are left out of its delta: {', '.join(map(str, left))}")
        delta, low, high = bootstrap_ci_clustered(eb, ea, confidence=confidence)
        p = stratified_permutation_p(eb, ea)
        per_eval = []
        for e in evals:
            ma = sum(ea[e]) / len(ea[e]) if ea[e] else None
            mb = sum(eb[e]) / len(eb[e]) if eb[e] else None
            per_eval.append({"eval": e, "before": _r(ma), "after": _r(mb), "runs_before": len(ea[e]),
                             "runs_after": len(eb[e]),
                             "delta": _r(mb - ma) if ma is not None and mb is not None else None})
        out_arms[arm] = {"pass_rate": {"delta": _r(delta), "low": _r(low), "high": _r(high),
                                       "p_value": _r(p, 6), "evals": compared[arm],
                                       "method": "bootstrap over evals (paired by eval), "
                                                 "permutation p stratified by eval"},
                         "per_eval": per_eval}
    notes.extend(setting_notes(a, b))
    return {"kind": "functional", "a": _side(a), "b": _side(b), "confidence": confidence,
            "compared": min(compared.values(), default=0), "evals": len(evals), "arms": out_arms,
            "notes": notes}
