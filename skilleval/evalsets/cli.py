"""``skilleval check-evals`` and ``skilleval review-evals``, plus the pre-run warnings that
``trigger_eval`` and ``trigger_opt`` print (`warn_before_run`)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from rich.console import Console
from skilleval.terminal import PlainConsole
from rich.markup import escape

from skilleval.errors import UserError
from skilleval.evalsets.text import term
from skilleval.cliargs import ArgParser as _Parser

if TYPE_CHECKING:
    from skilleval.app import JobContext
    from skilleval.domain import Skill, TriggerCase
    from skilleval.evalsets.checks import Report


SHOWN_BEFORE_RUN = 8


def _unit(name: str, value: float, low: float, high: float, *, closed_low: bool = False) -> float:
    ok = (low <= value if closed_low else low < value) and value < high
    if not ok:
        raise UserError(f"--{name} must be in {'[' if closed_low else '('}{low:g}, {high:g}), got {value:g}")
    return value


def _skill_for(path: Path, skill_arg: str | None) -> "Skill | None":
    from skilleval.skills import load_skill

    if skill_arg:
        return load_skill(skill_arg)
    return load_skill(path) if path is not None else None


def check_evals_main(argv: list[str]) -> int:
    from skilleval.evalsets.checks import check_rows
    from skilleval.evalsets.coverage import coverage
    from skilleval.evalsets.evalset import read_rows, resolve_set_path
    from skilleval.evalsets.power import power_statement
    from skilleval.store.catalog import resolve_root

    p = _Parser(prog="skilleval check-evals", description=(
        "Check a trigger eval set: duplicates and near-duplicates, class balance, queries naming "
        "the skill, cross-split duplicates (rows with a 'split' key), queries that never "
        "discriminate in stored runs, clause coverage (with --skill), and an exact power "
        "statement. Exit 0 when clean, 1 when there are warnings, 2 on bad input."))
    p.add_argument("path", help="an eval set file, or a skill folder (its evals/trigger_eval.json)")
    p.add_argument("--skill", help="the skill folder (default: the folder the set lives in)")
    p.add_argument("--runs", type=int, default=3, help="runs per query for the power statement, 1-1000 (3)")
    p.add_argument("--baseline", type=float, default=0.8, help="accuracy to detect a change from (0.8)")
    p.add_argument("--gain", type=float, default=None,
                   help="gain to size the set for (0.1, or half the room above --baseline)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level of the paired test (0.05)")
    p.add_argument("--similarity", type=float, default=90.0, help="near-duplicate threshold, 0-100 (90)")
    p.add_argument("--store", help="store root for stored runs (default: $SKILLEVAL_STORE or per-user)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    args = p.parse_args(argv)
    from skilleval.config_checks import MAX_RUNS_PER_QUERY

    if not 1 <= args.runs <= MAX_RUNS_PER_QUERY:
        raise UserError(f"--runs must be 1-{MAX_RUNS_PER_QUERY} (runs per query, as trigger.runs), "
                        f"got {args.runs}")
    _unit("baseline", args.baseline, 0, 1)
    _unit("alpha", args.alpha, 0, 1)
    _unit("similarity", args.similarity, 0, 100.0001)
    if args.gain is None:  # the default must fit the baseline the user chose (0.95 + 0.1 > 1)
        args.gain = min(0.1, round((1 - args.baseline) / 2, 6))
    if not 0 < args.gain < 1 - args.baseline + 1e-12:
        raise UserError(f"--gain must be in (0, {1 - args.baseline:g}], got {args.gain:g}")
    path, skill_dir = resolve_set_path(args.path)
    skill = _skill_for(skill_dir, args.skill) if (args.skill or skill_dir) else None
    rows = read_rows(path)
    if not rows:
        raise UserError(f"{path}: the eval set is empty")
    report = check_rows(rows, skill_name=skill.name if skill else None,
                        store_root=resolve_root(args.store), threshold=args.similarity)
    cov = coverage(skill, rows) if skill else []
    power = power_statement(len(rows), args.runs, args.baseline, args.alpha, args.gain)
    if args.format == "json":
        print(json.dumps({"eval_set": str(path), "queries": len(rows),
                          "findings": [f.to_dict() for f in report.findings],
                          "coverage": [c.to_dict() for c in cov], "power": power.to_dict()},
                         indent=2, ensure_ascii=False))
    else:
        out = PlainConsole(highlight=False)
        out.print(f"[bold]check-evals[/bold] {term(str(path))}: {len(rows)} queries"
                  + (f", skill {term(skill.name)}" if skill else ""))
        print_findings(out, report)
        if cov:
            gaps = [c for c in cov if not c.queries]
            out.print(f"coverage: {len(cov) - len(gaps)}/{len(cov)} clauses exercised")
            for c in gaps:
                out.print(f"  uncovered ({c.clause.polarity}): {term(c.clause.text[:100])}")
        for line in power.lines():
            out.print(escape(line))
    # what a run refuses (a blank query, two ids alike, a bad split) is bad input here too:
    # "clean", exit 0, then trigger_eval refusing the same set was a check that checked less
    from skilleval.datasets import load_trigger_cases

    try:
        load_trigger_cases(path)
    except UserError as exc:
        raise UserError(f"{exc} (trigger_eval and trigger_opt refuse this set)") from None
    return 1 if report.warnings else 0


def print_findings(out: Console, report: "Report") -> None:
    for f in report.findings:
        style = "yellow" if f.level == "warning" else "dim"
        out.print(f"[{style}]{f.level}[/{style}] {term(f.kind)}: {term(f.message)}")


def warn_before_run(job: "JobContext", skill: "Skill", cases: Sequence["TriggerCase"], *,
                    runs: int, threshold: float, splits: dict[str, str] | None = None) -> None:
    """check-evals as warnings before a run (never fatal; costs no backend call)."""
    from skilleval.evalsets.checks import check_rows
    from skilleval.evalsets.power import pre_run_lines

    rows: list[dict[str, Any]] = [{"query": c.query, "should_trigger": c.should_trigger, "id": c.id}
                                  for c in cases]
    groups = [splits.get(c.id, "?") for c in cases] if splits else None
    report = check_rows(rows, skill_name=skill.name, store_root=job.store.root, splits=groups,
                        trigger_threshold=threshold)
    warnings = report.warnings
    for f in warnings[:SHOWN_BEFORE_RUN]:
        job.console.print(f"[yellow]eval set warning[/yellow] {term(f.kind)}: {term(f.message)}")
    if len(warnings) > SHOWN_BEFORE_RUN:  # a pathological set must not flood the run's log
        rest = Counter(f.kind for f in warnings[SHOWN_BEFORE_RUN:])
        job.console.print(f"[yellow]eval set warning[/yellow] … and {len(warnings) - SHOWN_BEFORE_RUN} more ("
                          + ", ".join(f"{n} {k}" for k, n in rest.most_common()) + ")")
    if warnings:
        job.console.print("[dim]details: skilleval check-evals PATH --skill SKILL[/dim]")
    # Only the query-level lines are shown before a run (they do not depend on runs), and only
    # they are computed: the run-level numbers and the queries-needed search would delay the
    # first trial.
    for line in pre_run_lines(len(rows)):
        job.console.print(f"[dim]eval set power: {escape(line.strip())}[/dim]")


def review_evals_main(argv: list[str]) -> int:
    from skilleval.evalsets.review import serve_review

    p = _Parser(prog="skilleval review-evals", description=(
        "Review and edit a trigger eval set in the browser (127.0.0.1 only): edit queries, toggle "
        "should_trigger, delete, add; see each query's rationale, span and coverage. Save writes "
        "the set validated, in skill-creator's format, after a backup outside the skill folder."))
    p.add_argument("path", help="an eval set file, or a skill folder")
    p.add_argument("--skill", help="the skill folder (default: the folder the set lives in)")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    p.add_argument("--save-to", help="write the saved set here (default: the reviewed file)")
    p.add_argument("--backup-dir", help="where backups go (default: $SKILLEVAL_BACKUPS or <store>/_backups)")
    p.add_argument("--no-open", action="store_true", help="do not open a browser")
    args = p.parse_args(argv)
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port must be 0-65535, got {args.port}")
    return serve_review(args.path, skill=args.skill, port=args.port, save_to=args.save_to,
                        backup_dir=Path(args.backup_dir).expanduser() if args.backup_dir else None,
                        open_browser=not args.no_open)
