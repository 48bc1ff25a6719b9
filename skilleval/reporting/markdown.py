"""A Markdown summary for ``$GITHUB_STEP_SUMMARY`` or a PR comment: the metrics with their
intervals, the failing queries (or evals), and the gates.

Written to ``summary.md`` in the run's folder; when ``$GITHUB_STEP_SUMMARY`` names a file
(GitHub Actions sets it) and ``step_summary`` is on, the same text is appended there.
Queries and evidence are hostile text: pipes, backticks, HTML and Markdown punctuation are
escaped so a query cannot break the table or inject markup into the PR page.
"""
from __future__ import annotations

import html
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilleval.reporting.params import MarkdownParams
from skilleval.terminal import visible

if TYPE_CHECKING:
    from skilleval.app import JobContext

# Inline emphasis, code, links, tables and strike-through; line-start syntax (#, -, 1.) cannot
# occur since every value is one cell or follows other text on its line.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md(text: object, limit: int = 300) -> str:
    """One table-safe line: HTML escaped, Markdown punctuation backslash-escaped, control
    characters written out (summary.md is also read with ``cat`` and in CI logs)."""
    s = visible(" ".join(str(text).split()))
    if len(s) > limit:
        s = s[:limit] + "…"
    return _MD_SPECIAL.sub(r"\\\1", html.escape(s, quote=False))


def _est(e: Any) -> str:
    d = e.to_dict() if hasattr(e, "to_dict") else e
    if not d or d.get("value") is None:
        return "n/a"
    return f"{d['value']:.0%} [{d['low']:.0%}–{d['high']:.0%}]"


class MarkdownReporter:
    kinds = ("trigger_eval", "functional_eval", "gates")  # what it writes (reporting.applies)

    def __init__(self, params: MarkdownParams) -> None:
        self.params = params

    def report(self, job: "JobContext", kind: str, payload: Any) -> None:
        if kind == "trigger_eval":
            text = trigger_md(job, payload, self.params.max_rows)
        elif kind == "functional_eval":
            text = functional_md(job, payload, self.params.max_rows)
        elif kind == "gates":
            text = gates_md(payload)
            if text and job.experiment not in self.kinds:  # no section of its own to sit under
                text = f"### skilleval {md(job.experiment)}: {md(run_skill_name(job))}\n\n{_run(job)}\n\n{text}"
        else:
            return
        path = job.output_dir / self.params.filename
        with path.open("a" if kind == "gates" else "w", encoding="utf-8") as fh:
            fh.write(text)
        target = os.environ.get("GITHUB_STEP_SUMMARY")
        if self.params.step_summary and target:
            with Path(target).open("a", encoding="utf-8") as fh:
                fh.write(text)
        if kind != "gates":
            job.console.print(f"wrote {path}" + (f" (and appended to {target})"
                                                  if self.params.step_summary and target else ""))


def run_skill_name(job: "JobContext") -> str:
    """The run's skill (its folder's name when it cannot be read; routing lists several)."""
    if job.experiment == "routing":
        return "routing"
    try:
        return job.load_skill().name if job.cfg.get("skill") else ""
    except Exception:  # noqa: BLE001 - a heading is never worth failing the report
        return str(job.cfg.get("skill") or "")


def _run(job: "JobContext") -> str:
    """Which run, on what, with which settings: a sweep's jobs append to one step summary,
    and their sections must tell apart (``trigger.threshold=0.3`` vs ``0.7``)."""
    line = f"Run `{job.run_id}` · backend {md(job.backend.name)}/{md(job.backend.model)}"
    return line + (f" · overrides: {md(' '.join(job.overrides))}" if job.overrides else "")


def trigger_md(job: "JobContext", report: Any, max_rows: int) -> str:
    from skilleval.trigger.policies import rates_label, rates_unbiased

    s, r = report.summary, report.runner
    unbiased = rates_unbiased(r.settings)
    lines = [f"### skilleval trigger_eval: {md(report.skill.name)}", "",
             f"{_run(job)} · "
             f"{s.total_queries} queries, {s.trials} trials ({s.errors} errors, {s.timeouts} timeouts "
             f"not counted) · {r.calls_made} calls, {r.calls_cached} cached · ${r.cost_usd:.4f}", "",
             "| over | precision | recall | accuracy |", "|---|---|---|---|"]
    for over, group in (("queries", s.queries), ("runs" if unbiased else "runs\\*", s.runs)):
        lines.append(f"| {over} | {_est(group['precision'])} | {_est(group['recall'])} | {_est(group['accuracy'])} |")
    lines += ["", ("95% Wilson intervals" if abs(r.settings.confidence - 0.95) < 1e-9 else
                   f"{r.settings.confidence:.0%} Wilson intervals")
              + "; the runs row's are over queries (a query's runs are correlated).", ""]
    if not unbiased:
        # an adaptive policy's rates are biased: said next to them, as on the console
        lines += [(f"\\* Rates and run-level metrics are {md(rates_label(r.settings))}; per-query "
                   "rates below are early-stopped too. Verdicts and query-level metrics are exact."), ""]
    if job.summary.get("partial"):
        lines += [("**Partial: the run was stopped by the budget; queries short of their runs "
                   "are not the eval set's results.**"), ""]
    if job.summary.get("could_not_measure"):
        lines += [f"**Could not measure (exit 3): {md(job.summary['could_not_measure'], 600)}. "
                  "The figures above are not a measurement of the skill.**", ""]
    bad = [q for q in report.results if q.verdict != "pass"]
    if bad:
        lines += [f"**{s.failed} failed, {s.insufficient} without a verdict**", "",
                  "| verdict | expected | rate | query |", "|---|---|---|---|"]
        for q in bad[:max_rows]:
            spent = ", ".join(f"{n} {what}" for n, what in ((q.errors, "err"), (q.timeouts, "t/o")) if n)
            lines.append(f"| {q.verdict} | {'trigger' if q.case.should_trigger else 'quiet'} | "
                         f"{q.triggers}/{q.valid_runs}{f' ({spent})' if spent else ''} | "
                         f"{md(q.case.query)} |")
        if len(bad) > max_rows:
            lines.append(f"| … | | | {len(bad) - max_rows} more in junit.xml / results.json |")
    else:
        lines.append("Every query passed.")
    return "\n".join(lines) + "\n\n"


def functional_md(job: "JobContext", bench: dict[str, Any], max_rows: int) -> str:
    meta, ds = bench.get("metadata") or {}, bench.get("delta_stats") or {}
    p, b = ds.get("primary"), ds.get("baseline")
    pr = ds.get("pass_rate") or {}
    ci = "[n/a]" if pr.get("low") is None else f"[{pr['low']:+.2f}, {pr['high']:+.2f}]"
    delta = "n/a" if pr.get("delta") is None else \
        f"{pr['delta']:+.2f} {ci}, permutation p = {pr.get('p_value')}"
    lines = [f"### skilleval functional_eval: {md(meta.get('skill_name', ''))}", "",
             _run(job), "",
             *([f"**Could not measure (exit 3): {md('; '.join(map(str, bench['flags'])), 600)}. "
                "The figures below are not a measurement of the skill.**", ""] if bench.get("flags") else []),
             f"Pass-rate delta ({md(p)} − {md(b)}): {delta}", "",
             f"| eval | {md(p)} | {md(b)} | delta |", "|---|---|---|---|"]
    for row in (bench.get("per_eval") or [])[:max_rows]:
        d = row.get("delta_pass_rate")
        lines.append(f"| {md(row['eval_name'])} | {_arm_cell(row[p])} | "
                     f"{_arm_cell(row[b])} | {'n/a' if d is None else f'{d:+.2f}'} |")
    errs = bench.get("execution_errors") or {}
    bad = {a: e for a, e in errs.items() if e.get("error") or e.get("timeout")}
    if bad:
        lines += ["", "Errored / timed-out executions (in no number above): " + "; ".join(
            f"{md(a)}: {e.get('error', 0)} / {e.get('timeout', 0)}" for a, e in bad.items()) + "."]
    judge_errors = (bench.get("judge") or {}).get("judge_errors")
    if judge_errors:  # grades the judge could not give: neither passes nor failures
        lines += ["", f"Judge errors (expectations not graded, in no pass rate): {judge_errors}."]
    return "\n".join(lines) + "\n\n"


def _arm_cell(a: dict[str, Any]) -> str:
    """One arm of one eval: its mean pass rate, or why it has none (errors are never a 0 %)."""
    err = f" ({a['errors']} errored)" if a.get("errors") else ""
    if a.get("insufficient"):
        return f"insufficient: {a.get('valid', 0)} valid{err}"
    mean = (a.get("pass_rate") or {}).get("mean")
    return ("n/a" if mean is None else f"{mean:.0%}") + err


def gates_md(results: list[Any]) -> str:
    if not results:
        return ""
    failed = [r for r in results if not r.passed]
    unchecked = [r for r in results if not getattr(r, "checked", True)]
    checked = len(results) - len(unchecked)
    unmeasured = any(getattr(r, "unmeasured", False) for r in results)  # the run exits 3
    verdict = ("FAILED" if failed else "NOT CHECKED" if unmeasured else "passed" if checked
               else "not checked")  # none checked, or one unmeasurable: not a pass
    lines = [f"**Gates: {verdict}** ({checked - len(failed)}/{checked} passed"
             + (f"; {len(unchecked)} not checked" if unchecked else "") + ")",
             "", "| gate | metric | measured | required | result |", "|---|---|---|---|---|"]
    for r in results:
        verdict = "not checked" if r in unchecked else "pass" if r.passed else "**FAIL**"
        lines.append(f"| `{r.gate}` | {md(r.metric)} | {md(r.measured)} | {md(r.required)} | {verdict} |")
    return "\n".join(lines) + "\n\n"
