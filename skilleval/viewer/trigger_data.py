"""Data of the Trigger run page: per-query rates with intervals, metrics, confusion, trials.

While a run goes, the ``queries`` table is not written yet (it is written when the run ends),
so per-query figures are aggregated from the run's ``trials`` rows, and marked ``live``. When
the run has finished, the stored verdicts are used. Trials answered from the store's cache
belong to earlier runs; they are found by what makes them the same trial (skill, description,
backend, model, query), so every query still shows what the model did.
"""
from __future__ import annotations

from typing import Any

from skilleval.viewer.queries import Queries, interval

# No query text per trial (the page has it once per query): a 10,000-trial report stays small.
_TRIAL_COLS = ("ts, key, case_id, repeat, outcome, fired, position, latency_ms, "
               "retries, error, excerpt")


def _excerpt_col(q: Queries) -> str:
    """Older stores have no ``excerpt`` column; ask for NULL instead of failing."""
    return _TRIAL_COLS if _has_column(q, "trials", "excerpt") else _TRIAL_COLS.replace(
        "excerpt", "NULL AS excerpt")


def _has_column(q: Queries, table: str, column: str) -> bool:
    con = q._con()  # noqa: SLF001 - same module family
    try:
        cols = con.sql(f'SELECT * FROM "{table}" LIMIT 0').columns
    finally:
        con.close()
    return column in cols


def run_confidence(q: Queries, run_id: str) -> float:
    """The interval level the run itself printed (``trigger.confidence``): the page's
    intervals must be the console's, results.json's and junit.xml's, not 95 % regardless."""
    import yaml

    got = q.runs_sql("SELECT config_yaml FROM runs WHERE run_id = ?", [run_id]) if "runs" in q.tables() else []
    try:
        cfg = yaml.safe_load(got[0]["config_yaml"] or "") if got else None
        level = float(((cfg or {}).get("trigger") or {}).get("confidence", 0.95))
    except (yaml.YAMLError, TypeError, ValueError, AttributeError):
        return 0.95
    return level if 0 < level < 1 else 0.95


def trigger_page(q: Queries, run_id: str, confidence: float | None = None) -> dict[str, Any]:
    if confidence is None:
        confidence = run_confidence(q, run_id)
    stored = q.table_rows("queries", run_id, order="case_id") if "queries" in q.tables() else []
    run = (q.runs_sql("SELECT status, calls_cached FROM runs WHERE run_id = ?", [run_id])
           if "runs" in q.tables() else []) or [{"status": "running", "calls_cached": 0}]
    # No verdicts stored: the run is going (live), or it ended before writing them (Ctrl-C, a
    # crash): then nothing is "running" or "so far", and the trials it reused from the store,
    # found through its queries rows once it ends, are in none of the rates (said so).
    live = not stored and run[0]["status"] == "running"
    ended_early = not stored and not live
    if not stored:
        per_query = q.sql("""
            SELECT any_value(skill) AS skill, any_value(description) AS description, case_id,
                   any_value(query) AS query, any_value(should_trigger) AS should_trigger,
                   count(*) AS runs,
                   count(*) FILTER (WHERE outcome IN ('triggered', 'not_triggered')) AS valid_runs,
                   count(*) FILTER (WHERE outcome = 'triggered') AS triggers,
                   count(*) FILTER (WHERE outcome = 'error') AS errors,
                   count(*) FILTER (WHERE outcome = 'timeout') AS timeouts,
                   count(*) FILTER (WHERE outcome = 'not_triggered' AND fired IS NOT NULL) AS fired_other,
                   NULL AS verdict, NULL AS split
            FROM trials WHERE run_id = ? GROUP BY case_id ORDER BY case_id""", [run_id]) \
            if "trials" in q.tables() else []
    else:
        per_query = stored
    out_rows = []
    for r in per_query:
        rate = interval(r["triggers"], r["valid_runs"], confidence)
        out_rows.append({
            "case_id": r["case_id"], "query": r["query"], "should_trigger": r["should_trigger"],
            "split": r.get("split"), "runs": r["runs"], "valid_runs": r["valid_runs"],
            "triggers": r["triggers"], "errors": r["errors"], "timeouts": r["timeouts"],
            "fired_other": r["fired_other"], "rate": rate,
            "verdict": r.get("verdict") or ("no verdict" if ended_early else "running"),
            "description": r.get("description"),
            "skill": r.get("skill"),
            # an adaptive policy stopped this query once its verdict was settled: the verdict
            # is exact, the rate is early-stopped (biased) and is labelled so on the page
            "early_stopped": bool(r.get("policy") and r.get("policy") != "fixed"
                                  and r.get("planned_runs") is not None
                                  and (r.get("runs") or 0) < r["planned_runs"]),
        })
    return {"live": live, "queries": out_rows, "metrics": _metrics(out_rows, confidence),
            "listing": listing(q, run_id), "confidence": confidence,
            "reused_not_counted": int(run[0]["calls_cached"] or 0) if ended_early else 0,
            "ended_early": ended_early}


def _metrics(rows: list[dict[str, Any]], confidence: float) -> dict[str, Any]:
    """Over queries with a verdict: precision / recall / accuracy with Wilson intervals."""
    tp = fp = tn = fn = insufficient = 0
    for r in rows:
        v = r["verdict"]
        if v not in ("pass", "fail"):
            insufficient += v == "insufficient"
            continue
        ok = v == "pass"
        if r["should_trigger"]:
            tp, fn = tp + ok, fn + (not ok)
        else:
            tn, fp = tn + ok, fp + (not ok)
    errors = sum(r["errors"] for r in rows)
    timeouts = sum(r["timeouts"] for r in rows)
    return {"precision": interval(tp, tp + fp, confidence), "recall": interval(tp, tp + fn, confidence),
            "accuracy": interval(tp + tn, tp + tn + fp + fn, confidence),
            "tp": tp, "fp": fp, "tn": tn, "fn": fn, "insufficient": insufficient,
            "trials": sum(r["runs"] for r in rows), "errors": errors, "timeouts": timeouts}


def listing(q: Queries, run_id: str) -> list[str]:
    """The skills shown to the model in this run (the confusion view's columns)."""
    if "trials" not in q.tables():
        return []
    got = q.sql("SELECT DISTINCT unnest(listing) AS s FROM trials WHERE run_id = ? ORDER BY 1", [run_id])
    return [r["s"] for r in got]


def trials(q: Queries, run_id: str, since: str | None = None, limit: int = 20000) -> dict[str, Any]:
    """The run's own trials newer than `since` (ISO time; the client de-duplicates by key),
    plus, on the first call, cached trials of earlier runs that this run reused."""
    if "trials" not in q.tables():
        return {"rows": [], "cursor": since}
    cols = _excerpt_col(q)
    own = q.table_rows("trials", run_id, since=since, columns=cols, order="ts, key", limit=limit)
    reused: list[dict[str, Any]] = []
    if since is None and "queries" in q.tables():
        reused = q.sql(f"""
            WITH me AS (SELECT DISTINCT skill, description, backend, model FROM trials WHERE run_id = ?
                        UNION SELECT DISTINCT q.skill, q.description, r.backend, r.model
                        FROM queries q JOIN runs r USING (run_id) WHERE q.run_id = ? AND q.cached_runs > 0),
                 wanted AS (SELECT DISTINCT query FROM queries WHERE run_id = ? AND cached_runs > 0)
            SELECT {", ".join("t." + c.strip() if " " not in c.strip() else c for c in cols.split(","))}
            FROM trials t JOIN me ON t.skill = me.skill AND t.description = me.description
                 AND t.backend = me.backend AND t.model = me.model
            WHERE t.run_id <> ? AND t.outcome IN ('triggered', 'not_triggered')
              AND t.query IN (SELECT query FROM wanted)
              AND t.repeat < (SELECT max(runs) FROM queries WHERE run_id = ?)
            QUALIFY row_number() OVER (PARTITION BY t.key ORDER BY t.ts DESC) = 1
            ORDER BY t.ts LIMIT {int(limit)}""", [run_id, run_id, run_id, run_id, run_id])
        for r in reused:
            r["cached"] = True
    rows = reused + own
    cursor = max((r["ts"] for r in own), default=since)
    return {"rows": rows, "cursor": cursor}
