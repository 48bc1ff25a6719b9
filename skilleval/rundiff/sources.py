"""Where a run's results come from: the store (a run id, ``latest``, ``latest~N``) or a file.

A trigger run is read from the store's ``queries`` table (one row per query, written for
every run, cached trials included) or from a results.json, ours or skill-creator's
``run_eval.py`` output. A functional run is read from its ``benchmark.json`` (the run's
output folder, or a path): the store's grade rows are not repeated for cached grades, so
they do not hold a complete run.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilleval.errors import UserError
from skilleval.store.catalog import Store
from skilleval.textfiles import parse_json, read_text_file


@dataclass(frozen=True)
class QueryRow:
    """One trigger query of a run. `passed` is None when the verdict is "insufficient"."""

    query: str
    should_trigger: bool
    triggers: int
    valid_runs: int
    errors: int
    timeouts: int
    passed: bool | None
    # the rate stopped early (an adaptive policy ended the query once its verdict was
    # settled): the verdict is exact, the rate is biased
    early_stopped: bool = False
    threshold: float | None = None

    @property
    def rate(self) -> float | None:
        return self.triggers / self.valid_runs if self.valid_runs else None


@dataclass
class RunData:
    """What a diff needs of one side: its kind, a label, and its rows."""

    kind: str  # "trigger" | "functional"
    label: str
    run_id: str | None = None
    skill: str | None = None
    description: str | None = None
    queries: list[QueryRow] = field(default_factory=list)
    # functional: arm -> eval name -> per-run pass rates
    evals: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: what shapes a verdict besides the description (backend, model, threshold, policy):
    #: a diff says when the two sides differ in one, or its flips read as the description's
    settings: dict[str, Any] = field(default_factory=dict)


LATEST = re.compile(r"^latest(?:~(\d+))?$")
#: what `latest` counts by default: runs that measured and passed their gates. A regression
#: gate's baseline is one of these (a run that failed its gate must not become the bar).
DONE = ("done",)
#: experiments whose store rows look like a trigger run's but are not one skill's trigger results
NOT_DIFFED = ("routing",)


@dataclass(frozen=True)
class Like:
    """What a gate's ``latest`` baseline must share with the run it gates: the backend and
    model (a stub run is no baseline for a claude_cli one), and, when some earlier run has
    exactly these queries, those (the newest run on the same eval set, not one that shares
    2 of its 20 queries because another set was run in between)."""

    backend: str
    model: str | None
    queries: frozenset[str] = frozenset()
#: what `skilleval diff` counts: every finished measurement, a run whose gate failed included
#: (it is the run a person wants to see right after the red check), and one whose gate could
#: not be checked because its figure was undefined (its measurement is whole)
MEASURED = ("done", "gate_failed", "gate_unchecked")


def load(spec: str, store: Store, *, exclude: str | None = None, experiment: str | None = None,
         skill: str | None = None, statuses: tuple[str, ...] = DONE, like: Like | None = None) -> RunData:
    """Resolve `spec` (run id, ``latest``, ``latest~N``, or a JSON file) to a run's data;
    ``latest`` counts runs whose status is one of `statuses` (and that are `like` it)."""
    m = LATEST.match(spec)
    if m:
        return _from_store(_nth_latest(store, int(m.group(1) or 0), exclude, experiment, skill,
                                       statuses, like), store)
    path = Path(spec).expanduser()
    if spec.endswith(".json") or path.is_file():
        return from_file(path)
    return _from_store(spec, store)


def completed_runs(store: Store, *, exclude: str | None = None, experiment: str | None = None,
                   skill: str | None = None, statuses: tuple[str, ...] = DONE) -> list[dict[str, Any]]:
    """Finished runs, newest first (run_id, experiment, skill, ts, output_dir, backend, model)."""
    if "runs" not in store.tables():
        return []
    where, params = [f"status IN ({', '.join('?' * len(statuses))})"], list(statuses)
    if exclude:
        where.append("run_id <> ?")
        params.append(exclude)
    if experiment:
        where.append("experiment = ?")
        params.append(experiment)
    rows = store.query(f"SELECT run_id, experiment, skill, ts, output_dir, backend, model FROM runs WHERE "
                       f"{' AND '.join(where)} ORDER BY ts DESC, run_id DESC", params).to_pylist()
    if skill:  # the skill's name (trigger runs record it per query) or its folder's name
        named: dict[str, str] = {}
        if "queries" in store.tables():
            named = {r["run_id"]: r["skill"] for r in
                     store.query("SELECT DISTINCT run_id, skill FROM queries").to_pylist()}
        rows = [r for r in rows if named.get(r["run_id"]) == skill or
                (r["run_id"] not in named and _benchmark_skill(r) == skill)]
    return rows


def _benchmark_skill(run: dict[str, Any]) -> str | None:
    """A functional run's skill name, from its benchmark.json (else its folder's name)."""
    bench = Path(run.get("output_dir") or "") / "benchmark.json"
    try:
        return json.loads(bench.read_text(encoding="utf-8"))["metadata"]["skill_name"]
    except (OSError, ValueError, KeyError, TypeError):
        return Path(run["skill"]).name if run.get("skill") else None


def _nth_latest(store: Store, n: int, exclude: str | None, experiment: str | None,
                skill: str | None, statuses: tuple[str, ...] = DONE, like: Like | None = None) -> str:
    runs = [r for r in completed_runs(store, exclude=exclude, experiment=experiment, skill=skill,
                                      statuses=statuses)
            if kind_of(store, r) is not None
            and (like is None or (r["backend"], r["model"]) == (like.backend, like.model))]
    if n >= len(runs):
        what = f"latest~{n}" if n else "latest"
        kinds = " or ".join(statuses)
        on = f" on {like.backend}/{like.model}" if like is not None else ""
        raise UserError(f"{what}: the store at {store.root} holds {len(runs)} finished run(s) "
                        f"({kinds}) with results{on}" + (f" of experiment {experiment}" if experiment else ""))
    if like is not None and like.queries and n == 0:
        same = _with_queries(store, [r["run_id"] for r in runs], like.queries)
        if same is not None:
            return same
    return runs[n]["run_id"]


def _with_queries(store: Store, run_ids: list[str], queries: frozenset[str]) -> str | None:
    """The first of `run_ids` (newest first) whose trigger queries are exactly `queries`."""
    if "queries" not in store.tables() or not run_ids:
        return None
    rows = store.query(f"SELECT run_id, query FROM queries WHERE run_id IN ({', '.join('?' * len(run_ids))})",
                       run_ids).to_pylist()
    sets: dict[str, set[str]] = {}
    for r in rows:
        sets.setdefault(r["run_id"], set()).add(r["query"])
    return next((rid for rid in run_ids if sets.get(rid) == queries), None)


def kind_of(store: Store, run: dict[str, Any]) -> str | None:
    """"trigger" or "functional": what `diff` can compare of a stored run; None for a run
    with neither per-query rows nor a benchmark.json nor grades (attribute, draft_evals, ...), or a
    routing run (its per-query rows are about several skills: `diff` has no routing view)."""
    if run.get("experiment") in NOT_DIFFED:
        return None
    if "queries" in store.tables() and store.query(
            "SELECT 1 FROM queries WHERE run_id = ? LIMIT 1", [run["run_id"]]).num_rows:
        return "trigger"
    if run.get("output_dir") and (Path(run["output_dir"]) / "benchmark.json").is_file():
        return "functional"
    if "grades" in store.tables() and store.query(  # an imported workspace never aggregated
            "SELECT 1 FROM grades WHERE run_id = ? LIMIT 1", [run["run_id"]]).num_rows:
        return "functional"  # (`_from_grades` reads it, as `diff RUN RUN` did all along)
    return None


def _from_store(run_id: str, store: Store) -> RunData:
    tables = store.tables()
    # the run's row, read once (each query opens the store's views anew)
    found = store.query("SELECT experiment, status, backend, model, output_dir FROM runs WHERE run_id = ?",
                        [run_id]).to_pylist() if "runs" in tables else []
    run = found[0] if found else None
    if run is not None and run["experiment"] in NOT_DIFFED:
        raise UserError(f"run {run_id} is a {run['experiment']} run: diff compares one skill's "
                        "trigger_eval or functional runs (see a routing run's confusion matrix "
                        "in `skilleval view`, or query its rows with `skilleval sql`)")
    if "queries" in tables:
        rows = store.query("SELECT * FROM queries WHERE run_id = ? ORDER BY ts, case_id", [run_id]).to_pylist()
        if rows:
            data = RunData("trigger", run_id, run_id, rows[0]["skill"], rows[0]["description"])
            data.queries = [QueryRow(r["query"], bool(r["should_trigger"]), r["triggers"] or 0,
                                     r["valid_runs"] or 0, r["errors"] or 0, r["timeouts"] or 0,
                                     r["passed"], _stopped_early(r), r.get("threshold"))
                            for r in rows]
            data.settings = {"policy": rows[0].get("policy")}
            if run is not None:
                # (a run still "running" is the gate's own current run, complete by then)
                if run["status"] in ("budget_stopped", "interrupted", "failed", "stale"):
                    data.notes.append(f"{run_id} is {run['status']}: its results are partial")
                data.settings.update(backend=run["backend"], model=run["model"])
            return data
    if run is not None:
        bench = Path(run["output_dir"] or "") / "benchmark.json"
        if bench.is_file():
            data = from_file(bench)
            data.label = data.run_id = run_id
            return data
        graded = _from_grades(run_id, store)  # an import of a workspace with no benchmark.json
        if graded is not None:
            return graded
        raise UserError(f"run {run_id} ({run['status']}) has no per-query results, no graded "
                        f"executions and no benchmark.json in {run['output_dir']}")
    raise UserError(f"no run {run_id!r} in the store at {store.root} (give a run id, latest, "
                    "latest~N, or a results.json / benchmark.json file)")


def _from_grades(run_id: str, store: Store) -> RunData | None:
    """A functional run's pass rates from its stored grades: one rate per execution (the share
    of its graded expectations that passed; a judge error is in neither count), by arm and
    eval. For a run with no benchmark.json, e.g. an imported skill-creator workspace that was
    never aggregated. None when the run has no grade."""
    if "grades" not in store.tables():
        return None
    rows = store.query(
        "SELECT arm, coalesce(eval_name, CAST(eval_id AS VARCHAR)) AS eval, repeat, "
        "avg(CASE WHEN passed THEN 1.0 ELSE 0.0 END) FILTER (WHERE passed IS NOT NULL) AS rate "
        "FROM grades WHERE run_id = ? GROUP BY ALL ORDER BY ALL", [run_id]).to_pylist()
    if not rows:
        return None
    data = RunData("functional", run_id, run_id, None)
    for r in rows:
        if r["rate"] is not None:
            data.evals.setdefault(str(r["arm"]), {}).setdefault(str(r["eval"]), []).append(float(r["rate"]))
    data.notes.append(f"{run_id} has no benchmark.json: its pass rates are its stored grades, one "
                      "rate per execution")
    return data


def _stopped_early(row: dict[str, Any]) -> bool:
    """A store row whose query got fewer runs than planned under an adaptive policy."""
    policy, planned = row.get("policy"), row.get("planned_runs")
    return bool(policy and policy != "fixed" and planned is not None and (row.get("runs") or 0) < planned)


def from_file(path: Path) -> RunData:
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    doc = parse_json(read_text_file(path), str(path))
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        return _trigger_file(path, doc)
    if isinstance(doc, dict) and "history" in doc and "best_description" in doc:
        # its "runs" lists run ids, not benchmark runs: say what it is, not a KeyError
        raise UserError(f"{path}: a trigger_opt results.json (an optimisation, not one measured "
                        "run); give a trigger_eval or functional_eval run (its id, or its "
                        "results.json / benchmark.json)")
    if isinstance(doc, dict) and isinstance(doc.get("runs"), list):
        return _benchmark_file(path, doc)
    raise UserError(f"{path}: neither a trigger results.json (a 'results' list) nor a "
                    "benchmark.json (a 'runs' list)")


def _trigger_file(path: Path, doc: dict[str, Any]) -> RunData:
    data = RunData("trigger", str(path), doc.get("run_id"), doc.get("skill_name"), doc.get("description"))
    ours = "metrics" in doc
    threshold = (doc.get("settings") or {}).get("threshold") if ours else None
    if ours and doc.get("partial"):
        data.notes.append(f"{path.name}: the run was stopped by the budget; its results are partial")
    settings = doc.get("settings") if isinstance(doc.get("settings"), dict) else {}
    data.settings = {"policy": settings.get("policy"), "backend": doc.get("backend"),
                     "model": doc.get("model")}
    if not ours:
        data.notes.append(f"{path.name}: skill-creator's format counts errors as 'not triggered'; "
                          "its rates cannot separate them")
    for i, r in enumerate(doc["results"]):
        try:
            query, should = str(r["query"]), bool(r["should_trigger"])
            triggers = int(r.get("triggers", 0))
            valid = int(r["valid_runs"]) if ours and r.get("valid_runs") is not None else int(r.get("runs", 0))
            passed = r.get("pass")
            if ours and r.get("verdict") == "insufficient":
                passed = None
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{path}: results[{i}] is not a trigger result ({exc})") from None
        data.queries.append(QueryRow(query, should, triggers, valid, int(r.get("errors", 0) or 0),
                                     int(r.get("timeouts", 0) or 0),
                                     None if passed is None else bool(passed),
                                     bool(ours and r.get("early_stopped")), threshold))
    return data


def _benchmark_file(path: Path, doc: dict[str, Any]) -> RunData:
    meta = doc.get("metadata") or {}
    data = RunData("functional", str(path), meta.get("run_id"), meta.get("skill_name"))
    # evals an arm had too few valid executions of (functional.min_valid): the run itself
    # left them out of its delta, and so does the diff
    short = {(str(arm), str(e)) for arm, v in (doc.get("execution_errors") or {}).items()
             if isinstance(v, dict) for e in v.get("insufficient_evals") or []}
    left_out = 0
    for i, r in enumerate(doc["runs"]):
        try:
            arm = str(r["configuration"])
            name = str(r.get("eval_name") or r["eval_id"])
            rate = (r.get("result") or {}).get("pass_rate")
        except (KeyError, TypeError) as exc:
            raise UserError(f"{path}: runs[{i}] is not a benchmark run ({exc})") from None
        if (arm, name) in short:
            left_out += 1
        elif rate is not None:  # a run with no gradable expectation has no rate (not a zero)
            data.evals.setdefault(arm, {}).setdefault(name, []).append(float(rate))
    if left_out:
        data.notes.append(f"{path.name}: {left_out} run(s) of evals an arm had too few valid "
                          "executions of (insufficient) are left out, as in the run's own delta")
    partial = doc.get("partial")
    if isinstance(partial, dict):  # a budget stop: what was measured, not the whole run
        data.notes.append(f"{meta.get('run_id') or path.name} is partial ({partial.get('reason', 'stopped')}: "
                          f"{partial.get('executions_not_run', '?')} of {partial.get('executions_planned', '?')} "
                          "executions not run): its rates are over what ran")
    data.settings = {k: v for k, v in (("backend", meta.get("backend")), ("model", meta.get("executor_model")))
                     if v is not None}
    return data
