"""Reporters for trigger evaluations: a rich console table and skill-creator-shaped JSON."""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from rich.table import Table

from skilleval.reporting.params import ConsoleParams, JsonParams
from skilleval.stats import Estimate
from skilleval.trigger.policies import max_runs, rates_label, rates_unbiased
from skilleval.terminal import safe

if TYPE_CHECKING:
    from skilleval.app import JobContext
    from skilleval.trigger.experiment import TriggerEvalReport


def fmt_estimate(e: Estimate) -> str:
    if e.value is None:
        return "n/a"
    return f"{e.value:.0%} [{e.low:.0%}–{e.high:.0%}]"


def results_json(report: "TriggerEvalReport", job: "JobContext") -> dict[str, Any]:
    """skill-creator's run_eval.py output (same keys, input order) plus our fields."""
    s = report.summary
    settings = report.runner.settings
    planned = max_runs(settings)
    results = []
    for q in report.results:
        fired: dict[str, int] = {}
        for r in q.results:
            if r.outcome.valid and r.fired:
                fired[r.fired] = fired.get(r.fired, 0) + 1
        # skill-creator reads trigger_rate = triggers / runs, so `runs` is the valid runs the
        # rate is over; errors and timeouts (never a "no") have fields of their own.
        results.append({
            "query": q.case.query, "should_trigger": q.case.should_trigger,
            "trigger_rate": round(q.trigger_rate, 4) if q.trigger_rate is not None else None,
            "triggers": q.triggers, "runs": q.valid_runs,
            # too few valid runs: no verdict, neither a pass nor a failure (as trigger_opt writes it)
            "pass": q.passed, "insufficient": q.passed is None,
            "id": q.case.id, "verdict": q.verdict, "valid_runs": q.valid_runs,
            "errors": q.errors, "timeouts": q.timeouts, "attempts": q.runs, "fired": fired,
            "cached_runs": q.cached, "planned_runs": planned,
            "early_stopped": not rates_unbiased(settings) and q.runs < planned,
        })
    metrics = s.to_dict()
    metrics["rates"] = run_rates_label(report, job)
    return {
        "skill_name": report.skill.name,
        "description": report.skill.description,
        "results": results,
        "summary": {"total": s.total_queries, "passed": s.passed, "failed": s.failed,
                    "insufficient": s.insufficient},
        "metrics": metrics,
        # how to read every rate in this file (early-stopped rates are biased)
        "rates": metrics["rates"],
        "variant": job.variant.name if job.variant is not None else "",
        "description_hash": job.description_hash,
        "run_id": job.run_id, "sweep_id": job.sweep_id, "job_num": job.job_num,
        "backend": job.backend.name, "model": job.backend.model,
        "settings": asdict(report.runner.settings),
        "eval_set": report.cases_path,
        "distractors": [d.name for d in report.distractors],
        "calls": {"made": report.runner.calls_made, "cached": report.runner.calls_cached},
        # a budget stop leaves queries short of their runs: the file says so
        "partial": bool(job.summary.get("partial")),
        # set when the run exits 3 (too many errors, nothing measured): do not use its numbers
        "could_not_measure": job.summary.get("could_not_measure"),
        "budget_stop": job.budget.stopped if job.budget is not None else None,
        "cost_usd": round(report.runner.cost_usd, 6),
        "timing": {k: round(v, 3) for k, v in job.timing.items()},
    }


def cut_short(report: "TriggerEvalReport", job: "JobContext") -> tuple[int, int] | None:
    """(queries the budget stop left short of their planned runs, queries) of a partial run,
    else None. Under an adaptive policy a query may stop early by design: short means no
    verdict there."""
    if not job.summary.get("partial"):
        return None
    settings, planned = report.runner.settings, max_runs(report.runner.settings)
    short = sum(1 for q in report.results
                if (q.runs < planned if rates_unbiased(settings) else q.passed is None))
    return (short, len(report.results)) if short else None


def run_rates_label(report: "TriggerEvalReport", job: "JobContext") -> str:
    """`rates_label` for this run, partial when a budget stop cut queries short."""
    return rates_label(report.runner.settings, cut_short(report, job))


class JsonReporter:
    """Writes `results.json` into the run's output folder."""

    def __init__(self, params: JsonParams) -> None:
        self.params = params

    def report(self, job: "JobContext", kind: str, payload: Any) -> None:
        if kind != "trigger_eval":
            return
        path = job.output_dir / self.params.filename
        path.write_text(json.dumps(results_json(payload, job), indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        job.console.print(f"wrote {safe(path)}")


class ConsoleReporter:
    """Per-query table and metrics with intervals, on stdout."""

    def __init__(self, params: ConsoleParams) -> None:
        self.params = params

    def report(self, job: "JobContext", kind: str, payload: Any) -> None:
        if kind != "trigger_eval":
            return
        report: TriggerEvalReport = payload
        out = job.out
        if self.params.show_queries:
            table = Table(title=f"{safe(report.skill.name)}: per-query trigger rates", title_justify="left")
            # "attempts", as results.json names them: its "runs" are the valid runs a rate is over
            for col in ("query", "expect", "rate", "attempts", "verdict", "fired instead"):
                table.add_column(col, overflow="fold", max_width=60 if col == "query" else None)
            planned = max_runs(report.runner.settings)
            for q in report.results:
                rate = "—" if q.trigger_rate is None else f"{q.triggers}/{q.valid_runs}"
                runs = str(q.runs) if q.runs >= planned or rates_unbiased(report.runner.settings) \
                    else f"{q.runs} of {planned} (settled)"
                bad = f" ({q.errors} err, {q.timeouts} t/o)" if q.errors or q.timeouts else ""
                style = {"pass": "green", "fail": "red"}.get(q.verdict, "yellow")
                others = sorted({r.fired for r in q.results if r.fired and r.fired != q.target})
                table.add_row(safe(q.case.query), "trigger" if q.case.should_trigger else "quiet",
                              rate + bad, runs, f"[{style}]{q.verdict}[/{style}]",
                              safe(", ".join(others)))
            out.print(table)
        s = report.summary
        level = f"{report.runner.settings.confidence * 100:g}%"
        metrics = Table(title=f"metrics ({level} Wilson intervals)", title_justify="left",
                        caption="runs: pooled over runs, interval over queries (a query's runs "
                                "are correlated)", caption_justify="left")
        metrics.add_column("over")
        for name in ("precision", "recall", "accuracy", "f1"):
            metrics.add_column(name)
        metrics.add_row("queries", *(fmt_estimate(s.queries[n]) for n in ("precision", "recall", "accuracy", "f1")))
        unbiased = rates_unbiased(report.runner.settings)
        metrics.add_row("runs" if unbiased else "runs*",
                        *(fmt_estimate(s.runs[n]) for n in ("precision", "recall", "accuracy", "f1")))
        out.print(metrics)
        short = cut_short(report, job)
        if short is not None:
            out.print(f"[yellow]PARTIAL: the budget stopped the run; {short[0]} of {short[1]} queries got "
                      f"fewer than the {max_runs(report.runner.settings)} planned runs. The metrics "
                      "above are over what was measured and not comparable with a full run.[/yellow]")
        elif not unbiased:
            st = report.runner.settings
            stopped = sum(1 for q in report.results if q.runs < max_runs(st))
            out.print(f"[yellow]* early-stopped: policy {st.policy}: {stopped} of {len(report.results)} queries "
                      f"stopped before {max_runs(st)} runs once their verdict was settled. Verdicts "
                      "are exact; per-query rates and run-level metrics are early-stopped (biased) "
                      "and not comparable with fixed runs or skill-creator's. Use "
                      "trigger.policy=fixed for unbiased rates.[/yellow]")
        r = report.runner
        out.print(f"queries: {s.passed} passed, {s.failed} failed, {s.insufficient} insufficient · "
                  f"trials: {s.trials} ({s.valid_trials} valid, {s.errors} errors, {s.timeouts} timeouts, "
                  f"{s.retries} retries) · "
                  f"backend calls: {r.calls_made} new, {r.calls_cached} cached · cost ${r.cost_usd:.4f}")
        if s.error_kinds:
            shown = list(s.error_kinds.items())[:3]
            more = len(s.error_kinds) - len(shown)
            out.print("errors by kind: " + "; ".join(f"{n}× {safe(k[:160])}" for k, n in shown)
                      + (f"; {more} other kind(s) in results.json" if more else ""), soft_wrap=True)
