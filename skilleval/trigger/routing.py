"""The `routing` experiment: for each query, which of N listed skills fires?

Every query runs with all the given skills listed (plus ``trigger.catalog`` filler skills,
to see how recall holds as the catalog grows). A case is ``{query, expected_skill}``, where
``expected_skill`` is a skill name or null ("none should fire").

Counts are over *trials* (``trigger.runs`` per query, fixed policy), labelled so: a trial's
expected skill and the skill it fired make one cell of the confusion matrix, whose columns
are the skills, ``none``, ``other`` (a catalog filler fired) and ``error`` (errors and
timeouts: never counted as ``none``, and left out of every rate). The rates pool the trials;
their intervals are over *queries* (a query's trials are correlated, so an interval over
trials would be too narrow; see ``stats.clustered_estimate``).
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from skilleval.domain import Outcome, Skill, TriggerCase
from skilleval.errors import UserError
from skilleval.datasets import query_problem
from skilleval.skills import load_skill
from skilleval.textfiles import parse_json, read_text_file
from skilleval.stats import clustered_estimate

if TYPE_CHECKING:
    from skilleval.app import JobContext
    from skilleval.trigger.runner import QueryResult

NONE, OTHER, ERROR = "none", "other", "error"


@dataclass(frozen=True)
class RoutingCase:
    id: str
    query: str
    expected: str | None


@dataclass
class RoutingTally:
    skills: list[str]
    matrix: dict[str, dict[str, int]] = field(default_factory=dict)  # expected -> fired -> n
    #: case id -> (expected row, fired -> n): the trials of one query, the unit of the intervals
    per_case: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)

    def add(self, expected: str | None, fired: str, case_id: str = "") -> None:
        row = self.matrix.setdefault(expected or NONE, {})
        row[fired] = row.get(fired, 0) + 1
        cells = self.per_case.setdefault(case_id, (expected or NONE, {}))[1]
        cells[fired] = cells.get(fired, 0) + 1

    def cell(self, expected: str, fired: str) -> int:
        return self.matrix.get(expected, {}).get(fired, 0)

    def valid_row(self, expected: str) -> int:
        return sum(n for f, n in self.matrix.get(expected, {}).items() if f != ERROR)


def load_routing_cases(path: str | Path, skill_names: Sequence[str]) -> list[RoutingCase]:
    """Read ``[{query, expected_skill}]``; one line of error naming the file and entry."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise UserError(f"cases file not found: {p}")
    entries = parse_json(read_text_file(p), str(p))
    if not isinstance(entries, list) or not entries:
        raise UserError(f"{p}: expected a non-empty JSON list of {{query, expected_skill}}")
    cases = []
    asked: dict[str, int] = {}  # a query twice shares its trials: counted twice, maybe both ways
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not isinstance(e.get("query"), str) or not e["query"].strip():
            raise UserError(f"{p}: entry {i} needs a non-empty string 'query'")
        if problem := query_problem(e["query"]):
            raise UserError(f"{p}: entry {i}: {problem}")
        if e["query"].strip() in asked:
            raise UserError(f"{p}: entry {i}: duplicate query (same as entry {asked[e['query'].strip()]}): "
                            f"{e['query'].strip()[:60]!r}")
        asked[e["query"].strip()] = i
        if "expected_skill" not in e:
            raise UserError(f"{p}: entry {i} has no 'expected_skill' (a skill name, or null for none)")
        exp = e["expected_skill"]
        if exp is not None and exp not in skill_names:
            raise UserError(f"{p}: entry {i}: expected_skill {exp!r} is not one of the given "
                            f"skills ({', '.join(skill_names)})")
        cases.append(RoutingCase(str(e.get("id", f"r{i}")), e["query"], exp))
    # Results are tallied by id: two cases under one id would share the second's expectation.
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise UserError(f"{p}: duplicate id {c.id!r}")
        seen.add(c.id)
    return cases


def resolve_skills(spec: Any) -> list[Skill]:
    """``skills=[a, b]`` (folders), ``skills=FOLDER`` (its sub-folders holding SKILL.md), or
    ``skills=bundled`` (the bundled examples and stand-ins for Claude Code's document skills)."""
    if spec is None or spec == "" or spec == []:
        raise UserError("routing needs skills=[PATH,...], skills=FOLDER or skills=bundled")
    if isinstance(spec, str):
        if spec == "bundled":
            root = Path(str(resources.files("skilleval.examples")))
            paths = sorted(p for base in (root, root / "distractors") for p in base.iterdir()
                           if (p / "SKILL.md").is_file())
        else:
            folder = Path(spec).expanduser()
            if (folder / "SKILL.md").is_file():
                paths = [folder]
            elif folder.is_dir():
                paths = sorted(p for p in folder.iterdir() if (p / "SKILL.md").is_file())
            else:
                raise UserError(f"skills={spec}: not a folder")
            if not paths:
                raise UserError(f"skills={spec}: no sub-folder holds a SKILL.md")
    else:
        paths = [Path(str(s)).expanduser() for s in spec]
    skills = [load_skill(p) for p in paths]
    names = [s.name for s in skills]
    for reserved in (NONE, OTHER, ERROR):
        if reserved in names:
            raise UserError(f"{_path_of(skills, reserved)}: a skill is named {reserved!r}, which is "
                            f"a column of the routing matrix; rename it to measure routing")
    if len(set(names)) != len(names):
        dup = sorted(n for n in names if names.count(n) > 1)[0]
        where = " and ".join(str(s.path) for s in skills if s.name == dup)
        raise UserError(f"skills=: two skills share the name {dup!r} ({where})")
    return skills


def _path_of(skills: list[Skill], name: str) -> str:
    return next(str(s.path) for s in skills if s.name == name)


def catalog_skills(n: int, taken: set[str]) -> list[Skill]:
    """``n`` filler skills from the bundled catalog (experiments/routing/catalog.json)."""
    if n <= 0:
        return []
    path = Path(str(resources.files("skilleval.examples"))) / "routing" / "catalog.json"
    every = json.loads(path.read_text(encoding="utf-8"))
    entries = [e for e in every if e["name"] not in taken]
    if n > len(entries):
        left = len(every) - len(entries)
        same = f" ({left} left out: named like a skill given)" if left else ""
        raise UserError(f"trigger.catalog={n}: the bundled catalog has {len(every)} filler skills"
                        f"{same}; at most {len(entries)} can be added")
    return [Skill(e["name"], e["description"], "", path.parent, {"name": e["name"]})
            for e in entries[:n]]


def tally(results: Sequence["QueryResult"], cases: Sequence[RoutingCase],
          skills: Sequence[str]) -> RoutingTally:
    t = RoutingTally(list(skills))
    by_id = {c.id: c for c in cases}
    for q in results:
        case = by_id[q.case.id]
        for r in q.results:
            if not r.outcome.valid:
                fired = ERROR
            elif r.fired is None:
                fired = NONE
            else:
                fired = r.fired if r.fired in skills else OTHER
            t.add(case.expected, fired, case.id)
    return t


def metrics(t: RoutingTally, confidence: float) -> dict[str, Any]:
    """Per-skill precision and recall and overall accuracy, pooled over trials, each with an
    interval over *queries* (``stats.clustered_estimate``): the trials of one query are not
    independent draws, so a Wilson interval over trials would be too narrow."""
    def est(pairs: list[tuple[int, int]]) -> dict[str, Any]:
        return clustered_estimate(pairs, confidence)

    def valid(cells: dict[str, int]) -> int:
        return sum(n for f, n in cells.items() if f != ERROR)

    cases = list(t.per_case.values())
    per_skill = {}
    for s in t.skills:
        per_skill[s] = {
            "recall": est([(c.get(s, 0), valid(c)) for e, c in cases if e == s]),
            "precision": est([(c.get(s, 0) if e == s else 0, c.get(s, 0)) for e, c in cases])}
    rows = list(t.skills) + [NONE]
    errors = sum(t.cell(e, ERROR) for e in rows)
    # a query whose every trial errored has no valid trial: out of every rate, and said
    unmeasured = [cid for cid, (_, c) in t.per_case.items() if not valid(c)]
    return {"per_skill": per_skill, "accuracy": est([(c.get(e, 0), valid(c)) for e, c in cases]),
            "errors": errors, "unmeasured_queries": unmeasured, "unit": "trials (intervals over queries)",
            "interval": "wilson on the effective sample size of queries (design effect)",
            "columns": rows + [OTHER, ERROR],
            "matrix": {e: {c: t.cell(e, c) for c in rows + [OTHER, ERROR]} for e in rows}}


def routing_inputs(job: "JobContext") -> tuple[list[Skill], list[RoutingCase]]:
    """The skills and the labelled cases; also the experiment's ``check_inputs``, so bad ones
    are refused before the run is stored."""
    if job.variant is not None and job.variant.description is not None:  # it was ignored
        raise UserError("routing lists each skill with its own description: description= and "
                        "variant= apply to one skill= (trigger_eval, trigger_opt)")
    skills = resolve_skills(job.cfg.get("skills"))
    cases_file = job.cfg.get("cases")
    if not cases_file:
        raise UserError("routing needs cases=FILE (a JSON list of {query, expected_skill})")
    return skills, load_routing_cases(cases_file, [s.name for s in skills])


def run_routing(job: "JobContext") -> int:
    from skilleval.terminal import safe as escape  # rich markup *and* control characters
    from skilleval.trigger.routing_table import fmt, print_tables

    from skilleval.trigger.experiment import run_self_check
    from skilleval.trigger.runner import require_trustworthy

    skills, cases = job.prepared or routing_inputs(job)  # check_inputs read them already
    names = [s.name for s in skills]
    from skilleval.skills import description_problems

    if any(o.startswith(("skill=", "+skill=")) for o in job.overrides):
        job.console.print("[yellow]note: skill= is not used by routing (it lists skills=)[/yellow]")
    for s in skills:  # measured as written, but said (as trigger_eval says it of skill=)
        for problem, consequence in description_problems(s.description):
            job.console.print(f"[yellow]warning:[/yellow] {escape(s.path)}: {problem}; measured as "
                              f"written, but {consequence}")
    from skilleval.app import checked_number

    n_catalog = checked_number("trigger.catalog", job.cfg.trigger.get("catalog", 0), int)
    filler = catalog_skills(n_catalog, set(names))
    settings = job.trigger_settings(policy="fixed")
    runner = job.new_runner(settings)
    anchor, others = sorted(skills, key=lambda s: s.name)[0], [*skills, *filler]
    others = [s for s in others if s.name != anchor.name]
    trigger_cases = [TriggerCase(c.id, c.query, c.expected is not None) for c in cases]
    job.console.print(f"[bold]routing[/bold]: {len(cases)} queries × {settings.runs} runs, "
                      f"{len(skills)} skills + {len(filler)} catalog, backend {escape(job.backend.name)}")
    job.run(run_self_check(job, anchor, others))
    with job.progress():
        # The runner's target only names the trials; routing reads which skill fired.
        results = job.run(runner.evaluate(anchor, trigger_cases, others, label="routing"))
    job.store.close()
    m = metrics(tally(results, cases, names), settings.confidence)
    m.update(skills=names, catalog=len(filler), runs=settings.runs, cases=str(job.cfg.get("cases")),
             confidence=settings.confidence)
    _store_rows(job, results, cases, settings)
    (job.output_dir / "results.json").write_text(json.dumps(m, indent=2) + "\n", encoding="utf-8")
    job.summary.update(calls_made=runner.calls_made, calls_cached=runner.calls_cached,
                       cost_usd=runner.cost_usd, accuracy=m["accuracy"]["value"], errors=m["errors"],
                       gate_metrics={"accuracy": {**m["accuracy"], **ACCURACY_SAID, "unit": "trials"}},
                       # what the viewer's heatmap draws (the results.json figures, and each
                       # skill's description as listed)
                       routing={**m, "descriptions": {s.name: s.description for s in skills}})
    print_tables(m, settings.confidence, job.out)
    job.out.print(f"routing accuracy: {fmt(m['accuracy'])}; errors/timeouts: {m['errors']} "
                  f"(not counted as none)")
    if m["unmeasured_queries"]:
        from skilleval.terminal import safe

        job.out.print(f"{len(m['unmeasured_queries'])} of {len(cases)} queries had no "
                      f"valid trial (every one errored or timed out) and are in no rate: "
                      f"{safe(', '.join(map(str, m['unmeasured_queries'][:10])))}"
                      + (" …" if len(m["unmeasured_queries"]) > 10 else ""))
    require_trustworthy(results, job.cfg.trigger.get("max_error_rate", 1.0), "routing figures")
    return 0


def _store_rows(job: "JobContext", results: Sequence["QueryResult"], cases: Sequence[RoutingCase],
                settings: Any) -> None:
    from skilleval.trigger.policies import verdict
    now = dt.datetime.now(dt.timezone.utc)
    by_id = {c.id: c for c in cases}
    rows = []
    for q in results:
        c = by_id[q.case.id]
        valid = [r for r in q.results if r.outcome.valid]
        # The queries table's meaning, as for any trigger run: `triggers` counts the valid
        # trials that fired the expected skill or, for a "none" case, fired anything at all,
        # and the verdict follows the trigger rule (rate >= threshold if it should fire,
        # rate < threshold if not), so diff, the viewer and SQL read these rows correctly.
        should = c.expected is not None
        fired = sum((r.fired == c.expected) if should else (r.fired is not None) for r in valid)
        rate = fired / len(valid) if valid else None
        # the trigger rule, min_valid included (fewer valid runs: "insufficient")
        v = verdict(fired, len(valid), should, settings)
        passed = None if v == "insufficient" else v == "pass"
        rows.append({
            **job.identity_row(), "ts": now, "skill": c.expected or NONE, "description": "",
            "split": None, "case_id": c.id, "query": c.query, "should_trigger": should,
            "runs": len(q.results), "valid_runs": len(valid), "triggers": fired,
            "errors": sum(r.outcome is Outcome.ERROR for r in q.results),
            "timeouts": sum(r.outcome is Outcome.TIMEOUT for r in q.results), "trigger_rate": rate,
            "verdict": v,
            "passed": passed,
            "fired_other": sum(r.fired is not None and r.fired != c.expected for r in valid),
            "threshold": settings.threshold,
            "cached_runs": q.cached,
        })
    job.store.writer("queries", job.experiment, job.run_id).write(rows)


#: What ``accuracy`` is on a routing run, said wherever it is shown (gates, viewer, sweep table):
#: not the trigger_eval pass rate over queries, but the share of valid trials that fired the
#: expected skill (none, for a "none should fire" case), its interval over queries.
ACCURACY_SAID = {"label": "routing accuracy",
                 "means": "share of valid trials that fired the expected skill, or none for a "
                          "none case; interval over queries"}

run_routing.gate_metrics = ("accuracy",)  # type: ignore[attr-defined]
run_routing.reports = ()  # its own results and summary (reporting.applies)  # type: ignore[attr-defined]
run_routing.check_inputs = routing_inputs  # type: ignore[attr-defined]


def routing_factory(params: Any) -> Any:
    return run_routing
