"""The `trigger_eval` experiment: run the eval set, store per-query verdicts, report."""
from __future__ import annotations

import time
import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from skilleval.config import example_note
from skilleval.datasets import check_trigger_inputs
from skilleval.domain import Skill
from skilleval.errors import BudgetExhausted, HarnessError
from skilleval.gates import estimates as gate_estimates
from skilleval.trigger.metrics import TriggerSummary, summarize
from skilleval.trigger.policies import max_runs, rates_label
from skilleval.trigger.runner import QueryResult, TrialRunner, require_trustworthy
from skilleval.terminal import safe

if TYPE_CHECKING:
    from skilleval.app import JobContext


@dataclass
class TriggerEvalReport:
    """What reporters receive for a trigger evaluation."""

    skill: Skill
    distractors: list[Skill]
    results: list[QueryResult]
    summary: TriggerSummary
    runner: TrialRunner
    cases_path: str
    split: str | None = None


async def run_self_check(job: "JobContext", skill: Skill, distractors: list[Skill],
                         runner: Any = None) -> None:
    """Prove the harness measures before paying for a run (real backends only). The control
    calls count in `runner`'s calls made and cost, like any trial (the budget books them as
    they are sent, in `selfcheck._run`). A skill Claude Code keeps out of the listing
    (``disable-model-invocation: true``) is "could not measure" before any call, on every
    backend and with the self-check off too: its frontmatter says so, and a run reported
    recall 0 % (or paid six control calls to learn it)."""
    if not skill.model_invocable and job.experiment != "routing":  # routing lists many skills
        from skilleval.errors import HarnessError

        raise HarnessError(f"{skill.name!r} sets disable-model-invocation: true, so Claude Code keeps "
                           "it out of the model's listing and the model can never trigger it; there "
                           "is nothing to measure (exit 3, before any call)")
    if job.backend.needs_self_check and job.cfg.trigger.get("self_check", True):
        from skilleval.trigger.runner import trial_rows_recorder
        from skilleval.trigger.selfcheck import REPEATS, self_check

        def spent(results: list[Any]) -> None:
            calls, cost = len(results), sum(r.cost_usd or 0.0 for r in results)
            job.summary.update(self_check_calls=calls, self_check_cost_usd=cost)
            if runner is not None:
                runner.calls_made += calls
                runner.cost_usd += cost
            job.summary.update(calls_made=job.summary.get("calls_made", 0) + calls,
                               cost_usd=job.summary.get("cost_usd", 0.0) + cost)

        job.console.print("[dim]self-check: positive and negative controls…[/dim]")
        writer = job.store.writer("controls", job.experiment, job.run_id)
        recorder = trial_rows_recorder(writer, job.identity_row(), job.backend)
        try:
            sent = await self_check(job.backend, skill, distractors, job.budget,
                                    store=job.store, recorder=recorder, spent=spent)
        finally:
            writer.flush()
        if sent == 0:
            job.console.print(f"[dim]self-check: all {2 * REPEATS} control trials read from the "
                              "store (same skill, listing and backend); nothing sent[/dim]")


def query_rows(job: "JobContext", report: TriggerEvalReport) -> list[dict[str, Any]]:
    now = dt.datetime.now(dt.timezone.utc)
    rows = []
    for q in report.results:
        rows.append({
            **job.identity_row(), "ts": now, "skill": report.skill.name,
            "description": report.skill.description, "split": report.split or q.case.split,
            "case_id": q.case.id, "query": q.case.query, "should_trigger": q.case.should_trigger,
            "runs": q.runs, "valid_runs": q.valid_runs, "triggers": q.triggers,
            "errors": q.errors, "timeouts": q.timeouts, "trigger_rate": q.trigger_rate,
            "verdict": q.verdict, "passed": q.passed, "fired_other": q.fired_other,
            "threshold": q.settings.threshold, "cached_runs": q.cached,
            "policy": q.settings.policy, "planned_runs": max_runs(q.settings),
        })
    return rows


def self_check_calls(job: "JobContext") -> str:
    """The plan's promise includes the controls: "≤60 calls" and then 66 made reads as a bug."""
    if job.backend.needs_self_check and job.cfg.trigger.get("self_check", True):
        from skilleval.trigger.selfcheck import REPEATS

        return f" + ≤{2 * REPEATS} self-check"
    return ""


def run_trigger_eval(job: "JobContext") -> int:
    skill, cases = job.prepared or check_trigger_inputs(job)  # check_inputs read them already
    distractors = job.load_distractors()
    runner = job.new_runner()
    settings = runner.settings
    from skilleval.evalsets.cli import warn_before_run  # check-evals as warnings, no calls

    warn_before_run(job, skill, cases, runs=settings.runs, threshold=settings.threshold)
    job.console.print(
        f"[bold]trigger_eval[/bold] {safe(skill.name)}: {len(cases)} queries × ≤{max_runs(settings)} runs "
        f"({settings.policy}), backend {safe(job.backend.name)}/{safe(job.backend.model)}, "
        f"≤{runner.max_calls(len(cases))} calls{self_check_calls(job)}")
    if settings.policy != "fixed":
        job.console.print(f"[yellow]rates: {rates_label(settings)}[/yellow]")
    partial = False
    started = time.perf_counter()
    with job.progress():  # the self-check too: a slow backend shows as alive, not silent
        job.run(run_self_check(job, skill, distractors, runner))
        try:
            results = job.run(runner.evaluate(skill, cases, distractors))
        except BudgetExhausted as exc:
            job.console.print(f"[yellow]stopped: {safe(exc)}[/yellow]")
            results, partial = exc.partial, True  # type: ignore[attr-defined]
    job.store.close()  # flush every trial before timing and reporting
    job.timing["evaluate_seconds"] = time.perf_counter() - started
    summary = summarize(results, settings.confidence)
    report = TriggerEvalReport(skill, distractors, results, summary, runner, str(job.cases_path(skill)))
    job.store.writer("queries", job.experiment, job.run_id).write(query_rows(job, report))
    # Judged before reporting, so junit.xml, summary.md and results.json say that this run's
    # numbers are not to be used (exit 3), rather than show them as a measurement.
    try:
        require_trustworthy(results, job.cfg.trigger.get("max_error_rate", 1.0))
        untrusted = None
    except HarnessError as exc:
        untrusted = exc
    job.summary.update(calls_made=runner.calls_made, calls_cached=runner.calls_cached,
                       cost_usd=runner.cost_usd, accuracy=summary.queries["accuracy"].value,
                       partial=partial, gate_metrics=gate_estimates(summary.queries, results),
                       could_not_measure=str(untrusted) if untrusted else None)
    job.report("trigger_eval", report)
    note = example_note(skill.path)
    if note:
        job.console.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    if untrusted is not None:
        raise untrusted
    return 0


run_trigger_eval.check_inputs = check_trigger_inputs  # type: ignore[attr-defined]
run_trigger_eval.gate_metrics = ("precision", "recall", "accuracy")  # type: ignore[attr-defined]
run_trigger_eval.gate_baseline = True  # type: ignore[attr-defined]
run_trigger_eval.reports = ("trigger_eval",)  # type: ignore[attr-defined]


def trigger_eval_factory(params: Any) -> Any:
    return run_trigger_eval
