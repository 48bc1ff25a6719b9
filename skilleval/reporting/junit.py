"""JUnit XML for CI dashboards: one testcase per query (trigger) or per eval and arm
(functional), failures carrying the rate or the failed expectations' evidence, the run as
properties, and a ``gates`` suite when gates were checked.

Written with junitparser (a maintained JUnit/xUnit library) rather than by hand, so the
escaping and the counts (tests, failures, errors) are the library's. A query without a
verdict (too few valid runs) is an ``<error>``, never a failure: an error is not a "no".
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from skilleval.reporting.params import JunitParams

if TYPE_CHECKING:
    from skilleval.app import JobContext

# XML 1.0 forbids most C0 controls even escaped; model output can hold them.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def clean(text: object, limit: int = 4000) -> str:
    s = _XML_BAD.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
    return s if len(s) <= limit else s[:limit] + "…"


def _props(suite: TestSuite, values: dict[str, Any]) -> None:
    for k, v in values.items():
        if v is not None:
            suite.add_property(k, clean(v, 2000))


class JunitReporter:
    """Writes `junit.xml` into the run's output folder."""

    kinds = ("trigger_eval", "functional_eval", "gates")  # what it writes (reporting.applies)

    def __init__(self, params: JunitParams) -> None:
        self.params = params

    def path(self, job: "JobContext") -> Path:
        return job.output_dir / self.params.filename

    def report(self, job: "JobContext", kind: str, payload: Any) -> None:
        if kind == "trigger_eval":
            suite = trigger_suite(job, payload)
        elif kind == "functional_eval":
            suite = functional_suite(job, payload)
        elif kind == "gates":
            suite = gates_suite(payload, job)
        else:
            return
        path = self.path(job)
        if kind == "gates" and path.is_file():  # add to the run's file (drop its indentation first)
            xml = JUnitXml.fromstring(re.sub(r">\s+<", "><", path.read_text(encoding="utf-8")).encode())
        else:
            xml = JUnitXml("skilleval")
        xml.add_testsuite(suite)
        xml.update_statistics()
        xml.write(str(path), pretty=True)
        if kind != "gates":
            job.console.print(f"wrote {path}")


def _run_props(job: "JobContext") -> dict[str, Any]:
    return {"run_id": job.run_id, "sweep_id": job.sweep_id, "experiment": job.experiment,
            "backend": job.backend.name, "model": job.backend.model, "skill": job.cfg.get("skill")}


def trigger_suite(job: "JobContext", report: Any) -> TestSuite:
    s = report.summary
    suite = TestSuite(clean(f"trigger_eval: {report.skill.name}"))
    metrics = {f"{over}.{name}": (None if e.value is None else f"{e.value:.4f} [{e.low:.4f}, {e.high:.4f}]")
               for over, group in (("queries", s.queries), ("runs", s.runs)) for name, e in group.items()}
    from skilleval.reporting.trigger import run_rates_label

    _props(suite, {**_run_props(job), "description": report.skill.description,
                   "eval_set": report.cases_path, "threshold": report.runner.settings.threshold,
                   # how to read the runs.* metrics (early-stopped under an adaptive policy)
                   "rates": run_rates_label(report, job),
                   "partial": bool(job.summary.get("partial")),
                   "could_not_measure": job.summary.get("could_not_measure"),
                   **metrics, "trials": s.trials, "trial_errors": s.errors, "trial_timeouts": s.timeouts})
    from skilleval.trigger.policies import max_runs, rates_unbiased

    settings = report.runner.settings
    for q in report.results:
        expect = "should_trigger" if q.case.should_trigger else "should_not_trigger"
        # an adaptive policy stopped this query once its verdict was settled: the verdict is
        # exact, the rate is biased, and the message says so (as results.json and the viewer do)
        stopped = (" (early-stopped)" if not rates_unbiased(settings) and q.runs < max_runs(settings)
                   else "")
        # one line: a name is an attribute, where XML readers fold newlines into spaces anyway
        case = TestCase(clean(" ".join(q.case.query.split()), 1000),
                        clean(f"trigger.{report.skill.name}.{expect}"))
        rate = f"{q.triggers}/{q.valid_runs} valid runs triggered{stopped}"
        bad = f" ({q.errors} errors, {q.timeouts} timeouts not counted)" if q.errors or q.timeouts else ""
        if q.verdict == "fail":
            want = (f">= {q.settings.threshold:g}" if q.case.should_trigger else f"< {q.settings.threshold:g}")
            case.result = [Failure(clean(f"trigger rate {rate}{bad}; expected a rate {want}"),
                                   "TriggerMismatch")]
        elif q.verdict == "insufficient":
            case.result = [Error(clean(f"no verdict: {rate}{bad}; too few valid runs"), "Insufficient")]
        case.system_out = clean(f"trigger rate: {rate}{bad}; verdict {q.verdict}\nquery: {q.case.query}")
        suite.add_testcase(case)
    return suite


def functional_suite(job: "JobContext", bench: dict[str, Any]) -> TestSuite:
    meta = bench.get("metadata") or {}
    suite = TestSuite(clean(f"functional_eval: {meta.get('skill_name', '')}"))
    ds = bench.get("delta_stats") or {}
    pr = ds.get("pass_rate") or {}
    _props(suite, {**_run_props(job), "primary": ds.get("primary"), "baseline": ds.get("baseline"),
                   "pass_rate_delta": pr.get("delta"), "pass_rate_delta_low": pr.get("low"),
                   "pass_rate_delta_high": pr.get("high"), "pass_rate_p_value": pr.get("p_value"),
                   # the run exits 3: its figures are not a measurement
                   "could_not_measure": "; ".join(map(str, bench.get("flags") or [])) or None})
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    errored: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for key, rows in (("runs", groups), ("errored_runs", errored)):
        for r in bench.get(key, []):
            rows.setdefault((str(r.get("eval_name") or r.get("eval_id")), r["configuration"]), []).append(r)
    for ev_arm in errored:  # an eval whose every execution errored still gets its testcase
        groups.setdefault(ev_arm, [])
    # evals an arm had fewer than functional.min_valid valid executions of: the run left them
    # out of its delta ("insufficient"), so they get no verdict here either (an <error>)
    short = {(str(ev), str(arm)) for arm, v in (bench.get("execution_errors") or {}).items()
             if isinstance(v, dict) for ev in v.get("insufficient_evals") or []}
    min_valid = ds.get("min_valid") or 1
    baseline = ds.get("baseline")
    for (ev, arm), runs in sorted(groups.items()):
        case = TestCase(clean(f"{ev} [{arm}]", 1000), clean(f"functional.{meta.get('skill_name', '')}.{arm}"))
        n_err = len(errored.get((ev, arm), []))
        not_counted = f"; {n_err} errored/timed-out executions not counted" if n_err else ""
        passed = sum(r["result"].get("passed") or 0 for r in runs)
        failed = sum(r["result"].get("failed") or 0 for r in runs)
        judge_errors = sum(r["result"].get("judge_errors") or 0 for r in runs)
        if judge_errors:  # an expectation the judge could not grade is neither a pass nor a fail
            not_counted += f"; {judge_errors} judge errors not counted"
        failing = [f"run {r['run_number']}: {e['text']} — {e.get('evidence') or 'no evidence'}"
                   for r in runs for e in r.get("expectations", []) if e.get("passed") is False]
        rate = f"{passed}/{passed + failed} expectations passed over {len(runs)} runs{not_counted}"
        if passed + failed and (ev, arm) in short:
            case.result = [Error(clean(f"no verdict: {len(runs)} valid execution(s), fewer than "
                                       f"functional.min_valid={min_valid} (insufficient, left out of "
                                       f"the delta); {rate}"), "Insufficient")]
        elif failed and arm == baseline:
            # The comparison arm (without the skill, or the old skill) is there to be beaten:
            # its failed expectations are not a failure of the change under test, and a CI
            # counting them would go red (Jenkins: unstable) on every run. Shown, not failed.
            rate += "; baseline arm, for comparison: its failures do not fail the check"
            if failing:
                rate += "\nfailed expectations:\n" + "\n".join(failing)
        elif failed:
            f = Failure(clean(f"pass rate {rate}"), "ExpectationFailed")
            f.text = clean("\n".join(failing))
            case.result = [f]
        elif passed + failed == 0:
            case.result = [Error(clean(f"nothing graded: {judge_errors} judge errors, "
                                       f"{n_err} errored or timed-out executions"), "NotGraded")]
        case.system_out = clean(f"pass rate: {rate}")
        suite.add_testcase(case)
    return suite


def gates_suite(results: list[Any], job: Any = None) -> TestSuite:
    """The gates, in a suite named after the run's experiment and skill (a trigger_opt run
    has no suite of its own, and "gates" alone said neither what nor which skill)."""
    from skilleval.reporting.markdown import run_skill_name

    suite = TestSuite(clean(f"gates: {job.experiment}: {run_skill_name(job)}") if job is not None else "gates")
    for r in results:
        case = TestCase(clean(r.gate), "skilleval.gates")
        if not getattr(r, "checked", True):  # asked for, nothing to measure against: said so
            case.result = [Skipped(clean(r.measured if r.measured.startswith("not checked")
                                         else f"not checked: {r.measured}"))]
        elif not r.passed:
            case.result = [Failure(clean(f"{r.metric}: measured {r.measured}, required {r.required}"),
                                   "GateFailed")]
        case.system_out = clean(r.line)
        suite.add_testcase(case)
    if not results:
        case = TestCase("no gates", "skilleval.gates")
        case.result = [Skipped("no gate applied")]
        suite.add_testcase(case)
    return suite
