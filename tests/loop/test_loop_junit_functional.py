"""Audit of the CI path: junit.xml and summary.md of a functional run say what the run said.

An eval an arm had too few valid executions of (functional.min_valid) is "insufficient" in
benchmark.json, the console and summary.md, and left out of the delta; junit.xml reported
it as a passing test. Judge errors of a passing testcase were in no line of junit.xml, and
summary.md never mentioned judge errors."""
from __future__ import annotations

from pathlib import Path

import xmlschema
from junitparser import JUnitXml

from skilleval.functional.benchmark import build_benchmark
from skilleval.reporting.junit import functional_suite
from skilleval.reporting.markdown import functional_md
from tests.shared_helpers import report_job

XSD = Path(__file__).resolve().parents[1] / "ci" / "junit.xsd"


def _ok(ev: str, arm: str, n: int, passed: int, failed: int, judge_errors: int = 0) -> dict:
    return {"eval_id": ev, "eval_name": ev, "configuration": arm, "run_number": n, "status": "ok",
            "result": {"pass_rate": passed / (passed + failed), "passed": passed, "failed": failed,
                       "total": passed + failed + judge_errors, "time_seconds": 1.0, "tokens": 10,
                       "judge_errors": judge_errors},
            "expectations": [], "skill_fired": None}


def _timeout(ev: str, arm: str, n: int) -> dict:
    return {"eval_id": ev, "eval_name": ev, "configuration": arm, "run_number": n, "status": "timeout",
            "error": "timed out", "time_seconds": 0.1, "tokens": 0}


def _bench() -> dict:
    runs = [_ok("a", "with_skill", 1, 2, 0), _timeout("a", "with_skill", 2),
            _ok("a", "without_skill", 1, 1, 1), _ok("a", "without_skill", 2, 1, 1),
            _ok("b", "with_skill", 1, 2, 0, judge_errors=1), _ok("b", "with_skill", 2, 2, 0),
            _ok("b", "without_skill", 1, 0, 2), _ok("b", "without_skill", 2, 0, 2)]
    return build_benchmark(runs, {"skill_name": "s"}, "with_skill", "without_skill", n_boot=50, min_valid=2)


JOB = report_job()


def test_an_insufficient_arm_is_an_error_in_junit_not_a_pass(tmp_path: Path) -> None:
    b = _bench()
    assert b["per_eval"][0]["with_skill"]["insufficient"]  # what the run itself concluded
    suite = functional_suite(JOB, b)
    cases = {c.name: c for c in suite}
    [err] = cases["a [with_skill]"].result
    assert type(err).__name__ == "Error" and err.type == "Insufficient"
    assert "min_valid=2" in err.message and "1 errored/timed-out" in err.message
    xml = JUnitXml("skilleval")
    xml.add_testsuite(suite)
    xml.update_statistics()
    path = tmp_path / "junit.xml"
    xml.write(str(path))
    xmlschema.XMLSchema(str(XSD)).validate(str(path))
    back = JUnitXml.fromfile(str(path))
    # a [with_skill] insufficient; a/b [without_skill] failed expectations but are the baseline
    assert (back.tests, back.errors, back.failures) == (4, 1, 0)


def test_the_baseline_arms_failures_do_not_fail_the_check() -> None:
    """The arm without the skill is there to be beaten: its failed expectations made every
    functional junit.xml red (Jenkins: unstable). They are shown, not failed; the primary
    arm's failures still fail."""
    b = _bench()
    cases = {c.name: c for c in functional_suite(JOB, b)}
    base = cases["b [without_skill]"]
    assert base.result == [] and "baseline arm, for comparison" in base.system_out
    assert "0/4 expectations passed" in base.system_out
    runs = [_ok("c", "with_skill", 1, 1, 1), _ok("c", "with_skill", 2, 1, 1),
            _ok("c", "without_skill", 1, 2, 0), _ok("c", "without_skill", 2, 2, 0)]
    b2 = build_benchmark(runs, {"skill_name": "s"}, "with_skill", "without_skill", n_boot=50)
    cases = {c.name: c for c in functional_suite(JOB, b2)}
    assert type(cases["c [with_skill]"].result[0]).__name__ == "Failure"


def test_judge_errors_are_said_in_junit_and_markdown() -> None:
    b = _bench()
    cases = {c.name: c for c in functional_suite(JOB, b)}
    assert cases["b [with_skill]"].result == []  # every graded expectation passed
    assert "1 judge errors not counted" in cases["b [with_skill]"].system_out
    assert "Judge errors (expectations not graded, in no pass rate): 1." in functional_md(JOB, b, 20)
