"""The viewer's questions to the store, each one SQL pushed down to DuckDB.

Why pushed down: a store of a million trials must answer the Runs page in well under a second.
The `runs` view is small (a few rows per run); trial counts are asked only for the runs on the
page, and only from those runs' own Parquet folders (a glob per run id), so the cost does not
grow with the rest of the store. Nothing here loads a whole table into Python.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

import duckdb

from skilleval.stats import signed, wilson
from skilleval.store.catalog import Store, _glob_literal
from skilleval.viewer.runs_index import RunsIndex

# Run ids are generated (timestamp + hex); anything else is refused before it reaches a glob.
RUN_ID = re.compile(r"^[A-Za-z0-9._:-]{1,80}$")
PAGE_MAX = 200


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """Result rows as dicts (via Arrow: a 10,000-row page converts in milliseconds).
    Timestamps stay datetimes; the JSON writers turn them into strings."""
    return con.sql(sql, params=list(params) or None).to_arrow_table().to_pylist()


def interval(k: int | None, n: int | None, confidence: float = 0.95) -> dict[str, Any]:
    if not n:
        return {"k": k or 0, "n": 0, "value": None, "low": None, "high": None}
    lo, hi = wilson(int(k or 0), int(n), confidence)
    return {"k": int(k or 0), "n": int(n), "value": int(k or 0) / int(n), "low": lo, "high": hi}


class Queries:
    """Read-only questions about one store; one short-lived DuckDB connection per call."""

    def __init__(self, store: Store, *, keep_connection: bool = False) -> None:
        self.store = store
        self._kept: duckdb.DuckDBPyConnection | None = None
        self._keep = keep_connection  # one-shot readers (the report) reuse one connection
        self._tables: list[str] | None = None
        self.index = RunsIndex(store.root)
        self._kept_runs: duckdb.DuckDBPyConnection | None = None

    def tables(self) -> list[str]:
        if self._keep:
            if self._tables is None:
                self._tables = self.store.tables()
            return self._tables
        return self.store.tables()

    def _runs_con(self) -> duckdb.DuckDBPyConnection:
        """A connection over the runs index (kept for one-shot readers, like `_con`)."""
        if not self._keep:
            return self.index.connect()
        if self._kept_runs is None:
            self._kept_runs = self.index.connect()
        return _Borrowed(self._kept_runs)  # type: ignore[return-value]

    def _con(self) -> duckdb.DuckDBPyConnection:
        if not self._keep:
            return self.store.connect()
        if self._kept is None:
            self._kept = self.store.connect()
        return _Borrowed(self._kept)  # type: ignore[return-value]

    def _run_parts(self, table: str, run_ids: Sequence[str]) -> str | None:
        """A read_parquet() over only the given runs' folders of `table` (None: no parts)."""
        base = self.store.root / table
        globs = []
        for rid in run_ids:
            if not RUN_ID.match(rid):
                continue
            pat = _glob_literal((base / "*").as_posix()[:-1]) + f"*/run={_glob_literal(rid)}/*.parquet"
            if any(base.glob(f"*/run={rid}/*.parquet")):
                globs.append(pat.replace("'", "''"))
        if not globs:
            return None
        listed = ", ".join(f"'{g}'" for g in globs)
        return f"read_parquet([{listed}], union_by_name = true, hive_partitioning = false)"

    # -- runs -------------------------------------------------------------------------

    def runs(self, *, q: str = "", experiment: str = "", status: str = "", sweep: str = "",
             offset: int = 0, limit: int = 50) -> dict[str, Any]:
        limit = max(1, min(PAGE_MAX, int(limit)))
        offset = max(0, int(offset))
        if "runs" not in self.tables():
            return {"rows": [], "total": 0, "offset": offset, "limit": limit, "experiments": []}
        where, params = ["TRUE"], []
        if q:
            # the text is matched literally, as the static report's filter does: '%' and '_'
            # typed in the box are not LIKE wildcards ('%' listed every run)
            like = "ILIKE ? ESCAPE '\\'"
            where.append(f"(run_id {like} OR skill {like} OR experiment {like} OR model {like} "
                         f"OR backend {like} OR array_to_string(overrides, ' ') {like})")
            literal = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params += [f"%{literal}%"] * 6
        for col, val in (("experiment", experiment), ("sweep_id", sweep)):
            if val:
                where.append(f"{col} = ?")
                params.append(val)
        if status:
            where.append(self._status_condition(status, params))
        cond = " AND ".join(where)
        con = self._runs_con()
        try:
            total = rows(con, f"SELECT count(*) AS n FROM runs WHERE {cond}", params)[0]["n"]
            page = rows(con, f"""
                SELECT run_id, sweep_id, job_num, experiment, status, backend, model, skill, ts,
                       output_dir, overrides, calls_made, calls_cached, cost_usd, summary_json,
                       started, z.sweep_size
                FROM runs JOIN (SELECT sweep_id, count(*) AS sweep_size FROM runs GROUP BY 1) z
                     USING (sweep_id)
                WHERE {cond} ORDER BY started DESC, run_id DESC LIMIT {limit} OFFSET {offset}""",
                params)
            experiments = [r["experiment"] for r in rows(
                con, "SELECT DISTINCT experiment FROM runs ORDER BY 1")]
            self._add_headlines(con, page)
            self._liveness(page)
        finally:
            con.close()
        return {"rows": page, "total": int(total), "offset": offset, "limit": limit,
                "experiments": experiments}

    def _status_condition(self, status: str, params: list[Any]) -> str:
        """The filter for one status as the page shows it: a 'running' row whose lease nobody
        holds is shown 'stale' (see _liveness), so 'running' and 'stale' split the stored
        'running' rows by the leases held now. Where leases do not exist (a remote store)
        nothing is known to be stale, and 'running' keeps every stored 'running' row."""
        if status not in ("running", "stale"):
            params.append(status)
            return "status = ?"
        if not isinstance(self.store.root, Path):
            return "status = 'running'" if status == "running" else "FALSE"
        from skilleval.store.liveness import alive_runs

        params.append(alive_runs(self.store.root))
        held = "list_contains(?::VARCHAR[], run_id)"
        return f"status = 'running' AND {held if status == 'running' else 'NOT ' + held}"

    def _add_headlines(self, con: duckdb.DuckDBPyConnection, page: list[dict[str, Any]]) -> None:
        """Headline metric with its interval, and the live trial count, for each run shown."""
        ids = [r["run_id"] for r in page]
        acc: dict[str, dict[str, Any]] = {}
        if "queries" in self.tables() and (src := self._run_parts("queries", ids)):
            for r in rows(con, f"""SELECT run_id, sum(CASE WHEN passed THEN 1 ELSE 0 END) AS k,
                                   count(passed) AS n FROM {src} GROUP BY run_id"""):
                acc[r["run_id"]] = interval(r["k"], r["n"])
        trials: dict[str, dict[str, Any]] = {}
        if "trials" in self.tables() and (src := self._run_parts("trials", ids)):
            for r in rows(con, f"""SELECT run_id, count(*) AS trials,
                        count(*) FILTER (WHERE outcome IN ('error', 'timeout')) AS errors,
                        max(ts) AS last FROM {src} GROUP BY run_id"""):
                trials[r["run_id"]] = r
        for r in page:
            summary = _loads(r.pop("summary_json"))
            t = trials.get(r["run_id"], {})
            r["trials"] = t.get("trials", 0)
            r["errors"] = t.get("errors", 0)
            r["last_trial"] = t.get("last")
            r["headline"] = _headline(r["experiment"], summary, acc.get(r["run_id"]))
            if work := _work(summary):
                r["work"] = work
            if "executions_run" in summary:  # a functional run: its executions, errors never hidden
                errs = summary.get("execution_errors") or {}
                r["executions"] = int(summary.get("executions_run") or 0) + int(summary.get("executions_cached") or 0)
                r["execution_errors"] = sum(int(e.get("error") or 0) + int(e.get("timeout") or 0)
                                            for e in errs.values() if isinstance(e, dict))

    def run(self, run_id: str) -> dict[str, Any] | None:
        if "runs" not in self.tables():
            return None
        con = self._runs_con()
        try:
            found = rows(con, "SELECT * FROM runs WHERE run_id = ?", [run_id])
            if not found:
                return None
            r = found[0]
            self._liveness([r])
            r["summary"] = _loads(r.pop("summary_json"))
            r.pop("config_yaml", None)
            r["tables"] = [t for t in ("trials", "queries", "candidates", "executions", "grades",
                                       "comparisons") if t in self.tables()
                           and self._run_parts(t, [run_id])]
            return r
        finally:
            con.close()

    def _liveness(self, page: list[dict[str, Any]]) -> None:
        """A run still 'running' whose liveness lease nobody holds was killed: 'stale', the
        store's own rule (`skilleval sql`'s runs view). ``alive`` is None where leases do
        not exist (a remote store), and the page falls back to how long it has been quiet."""
        from skilleval.store.liveness import alive_runs

        local = isinstance(self.store.root, Path)
        live = set(alive_runs(self.store.root)) if local and any(r["status"] == "running" for r in page) else set()
        for r in page:
            if r["status"] != "running":
                continue
            r["alive"] = (r["run_id"] in live) if local else None
            if local and not r["alive"]:
                r["status"] = "stale"

    def latest_run(self) -> str | None:
        if "runs" not in self.tables():
            return None
        con = self._runs_con()
        try:
            got = rows(con, "SELECT run_id FROM runs ORDER BY ts DESC, run_id DESC LIMIT 1")
            return got[0]["run_id"] if got else None
        finally:
            con.close()

    def workspaces(self) -> dict[str, Path]:
        """Every workspace (iteration folder) a run recorded, by run id."""
        out: dict[str, Path] = {}
        if "runs" not in self.tables():
            return out
        con = self._runs_con()
        try:
            for r in rows(con, "SELECT run_id, summary_json, output_dir FROM runs"):
                rid, summary, output_dir = r["run_id"], r["summary_json"], r["output_dir"]
                ws = _loads(summary).get("workspace")
                if ws:
                    out[rid] = Path(ws)
                elif output_dir and (Path(output_dir) / "workspace").is_dir():
                    its = sorted((Path(output_dir) / "workspace").glob("iteration-*"))
                    if its:
                        out[rid] = its[-1]
        finally:
            con.close()
        return out

    # -- one run's tables ---------------------------------------------------------------

    def table_rows(self, table: str, run_id: str, *, order: str = "ts", since: str | None = None,
                   columns: str = "*", limit: int = 100_000) -> list[dict[str, Any]]:
        """Rows of `table` for one run, newer than `since` (an ISO timestamp cursor)."""
        src = self._run_parts(table, [run_id]) if table in self.tables() else None
        if src is None:
            return []
        where, params = "run_id = ?", [run_id]
        if since:
            where += " AND ts >= CAST(? AS TIMESTAMPTZ)"
            params.append(since)
        con = self._con()
        try:
            return rows(con, f"SELECT {columns} FROM {src} WHERE {where} ORDER BY {order} "
                             f"LIMIT {int(limit)}", params)
        finally:
            con.close()

    def runs_sql(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """SQL over ``runs`` (latest row per run) and ``run_rows`` only: no other table opened."""
        con = self._runs_con()
        try:
            return rows(con, sql, params)
        finally:
            con.close()

    def sql(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        con = self._con()
        try:
            return rows(con, sql, params)
        finally:
            con.close()


class _Borrowed:
    """A kept connection lent out: `close()` leaves it open for the next question."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con

    def sql(self, *a: Any, **k: Any) -> Any:
        return self._con.sql(*a, **k)

    def close(self) -> None:
        return None


def _loads(text: str | None) -> dict[str, Any]:
    try:
        v = json.loads(text or "{}")
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _headline(experiment: str, summary: dict[str, Any], acc: dict[str, Any] | None) -> dict[str, Any]:
    """The one figure a run is known by, with its interval when there is one."""
    gm = summary.get("gate_metrics")
    a = gm.get("accuracy") if isinstance(gm, dict) else None
    if isinstance(a, dict) and a.get("label"):
        # an experiment whose published accuracy is not the pass rate of its per-query rows
        # labels it (see skilleval.gates): the run's own figure, under its own name and level
        routing = summary.get("routing") if isinstance(summary.get("routing"), dict) else {}
        return {"label": str(a["label"]), "value": a.get("value"),
                "low": a.get("low"), "high": a.get("high"), "k": a.get("k"), "n": a.get("n"),
                "level": a.get("confidence") or routing.get("confidence") or 0.95}
    if acc and acc["n"]:
        return {"label": "accuracy", **acc, "level": 0.95}
    delta = (summary.get("delta") or {}).get("pass_rate") if isinstance(summary.get("delta"), dict) else None
    if delta:
        # the run's own interval, at the run's level (functional.confidence), said with it
        return {"label": "Δ pass rate", "value": delta.get("delta"), "low": delta.get("low"),
                "high": delta.get("high"), "p_value": delta.get("p_value"),
                "level": summary["delta"].get("confidence") or 0.95}
    attribution = summary.get("attribution")
    if isinstance(attribution, dict) and attribution.get("ranking"):
        top = attribution["ranking"][0]
        rows = attribution.get("attribution") or []
        effect = (rows[top] if top < len(rows) else {}).get("shapley_recall") or {}
        return {"label": f"top sentence of {len(rows)}",
                "text": f"#{top + 1}, Shapley Δrecall {_signed_ci(effect)}"}
    wins = summary.get("wins")
    if isinstance(wins, dict) and summary.get("primary"):  # a blind comparison: its tally
        primary, baseline = summary["primary"], summary.get("baseline")
        text = (f"{primary} {wins.get(primary, 0)} · {baseline} {wins.get(baseline, 0)} · "
                f"tie {wins.get('TIE', 0)}")
        if summary.get("sign_test_p") is not None:
            text += f", sign test p={summary['sign_test_p']:.2g}"
        if summary.get("judge_errors"):
            text += f" ({summary['judge_errors']} judge errors, in no count)"
        return {"label": "blind comparison", "text": text}
    if summary.get("best_test"):
        return {"label": "test (original → best)",
                "text": f"{summary.get('original_test')} → {summary.get('best_test')}"}
    if summary.get("accuracy") is not None:
        return {"label": "accuracy", "value": summary.get("accuracy")}
    return {}


def _work(summary: dict[str, Any]) -> str | None:
    """What a run made when its unit is not a trial or an execution (a blind comparison's
    judged pairs, a draft's queries), for the Runs line that would otherwise read 0."""
    if isinstance(summary.get("pairs"), int) and isinstance(summary.get("judged"), int):
        return f"{summary['judged']} of {summary['pairs']} pairs judged"
    if isinstance(summary.get("drafted"), int):
        return f"{summary['drafted']} queries drafted"
    return None


def _signed_ci(effect: dict[str, Any]) -> str:
    """``+0.40 [+0.20, +0.60]`` (n/a where the run measured no query for it)."""
    value, low, high = effect.get("value"), effect.get("low"), effect.get("high")
    if value is None:
        return "n/a"
    return signed(value) if low is None or high is None else \
        f"{signed(value)} [{signed(low)}, {signed(high)}]"
