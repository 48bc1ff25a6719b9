"""Audit of the functional benchmark figures: intervals that data cannot support are n/a."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from scipy import stats as sps

from skilleval.functional.benchmark import build_benchmark
from skilleval.stats import bootstrap_ci_clustered, stratified_permutation_p

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"


def _run(ev: str, cfg: str, n: int, rate: float | None, status: str = "ok") -> dict:
    if status != "ok":
        return {"eval_id": ev, "eval_name": ev, "configuration": cfg, "run_number": n,
                "status": status, "error": "HTTP 500"}
    return {"eval_id": ev, "eval_name": ev, "configuration": cfg, "run_number": n, "status": "ok",
            "result": {"pass_rate": rate, "time_seconds": 10.0 + n, "tokens": 100 * n,
                       "judge_errors": 0}, "expectations": []}


def test_one_eval_one_run_has_no_interval_not_a_zero_width_one() -> None:
    # The point is known, its uncertainty is not: a zero-width interval next to p = 1 lied.
    delta, low, high = bootstrap_ci_clustered({"e": [0.2]}, {"e": [1.0]})
    assert delta == pytest.approx(-0.8) and math.isnan(low) and math.isnan(high)
    assert stratified_permutation_p({"e": [0.2]}, {"e": [1.0]}) == 1.0
    # an eval with enough runs for the permutation test to reach p < 0.05 keeps its interval
    # (4 vs 4: 2/70 at best); 3 vs 3 cannot (2/20 at best) and has none
    d, lo, hi = bootstrap_ci_clustered({"e": [0.2, 0.6, 0.4, 0.5]}, {"e": [1.0, 0.8, 0.6, 0.7]}, n_boot=500)
    assert lo < d < hi
    d, lo, hi = bootstrap_ci_clustered({"e": [0.2, 0.6, 0.4]}, {"e": [1.0, 0.8, 0.6]}, n_boot=500)
    assert math.isnan(lo) and math.isnan(hi)


def test_several_evals_of_one_run_each_have_no_interval_the_test_cannot_back() -> None:
    """4 evals, one run per arm, every eval +0.10: the bootstrap over evals gave
    [+0.10, +0.10] beside a permutation p of 0.125, and a lower-bound gate passed on one
    execution an eval. 6 evals can reach p < 0.05 (2/64) and get an interval."""
    four_p = {e: [0.6] for e in "abcd"}
    four_b = {e: [0.5] for e in "abcd"}
    d, lo, hi = bootstrap_ci_clustered(four_p, four_b)
    assert d == pytest.approx(0.1) and math.isnan(lo) and math.isnan(hi)
    assert stratified_permutation_p(four_p, four_b) == pytest.approx(0.125)
    six_p = {e: [0.6 + 0.05 * i] for i, e in enumerate("abcdef")}
    six_b = {e: [0.5] for e in "abcdef"}
    d, lo, hi = bootstrap_ci_clustered(six_p, six_b)
    assert lo <= d <= hi
    b = build_benchmark([_run("e", "with_skill", 1, 0.2), _run("e", "with_skill", 2, None, "error"),
                         _run("e", "without_skill", 1, 1.0)], {}, "with_skill", "without_skill", n_boot=50)
    pr = b["delta_stats"]["pass_rate"]
    assert pr["delta"] == pytest.approx(-0.8) and pr["low"] is None and pr["high"] is None


def test_benchmark_statistics_match_scipy_with_errors_left_out() -> None:
    """Errored executions are in no figure: means, delta, interval and p-value equal the ones
    computed by scipy from the valid runs alone (one eval: the permutation test is scipy's
    independent-samples permutation test of the difference of means)."""
    with_ = [0.5, 1.0, 0.75, 1.0]
    without = [0.25, 0.5, 0.25]
    runs = [_run("e", "with_skill", i, r) for i, r in enumerate(with_, 1)]
    runs += [_run("e", "without_skill", i, r) for i, r in enumerate(without, 1)]
    runs += [_run("e", "with_skill", 9, None, "error"), _run("e", "without_skill", 9, None, "timeout")]
    b = build_benchmark(runs, {}, "with_skill", "without_skill", n_boot=4000, seed=3)
    pr = b["delta_stats"]["pass_rate"]
    mean = lambda x: sum(x) / len(x)  # noqa: E731
    assert pr["delta"] == pytest.approx(mean(with_) - mean(without), abs=1e-4)
    assert pr["primary_mean"] == pytest.approx(mean(with_), abs=1e-4)
    # two-sided as |difference| >= |observed| (scipy, exact: all 35 splits)
    ref = sps.permutation_test((with_, without), lambda x, y: abs(sum(x) / len(x) - sum(y) / len(y)),
                               permutation_type="independent", alternative="greater",
                               n_resamples=20000, random_state=1)
    assert pr["p_value"] == pytest.approx(ref.pvalue, abs=1e-4)  # exact (35 splits), 4 dp
    tm = b["delta_stats"]["time_seconds"]
    assert tm["delta"] == pytest.approx(mean([11, 12, 13, 14]) - mean([11, 12, 13]), abs=1e-4)
    ee = b["execution_errors"]
    assert (ee["with_skill"]["valid"], ee["with_skill"]["error"]) == (4, 1)
    assert (ee["without_skill"]["valid"], ee["without_skill"]["timeout"]) == (3, 1)
    assert b["run_summary"]["with_skill"]["pass_rate"]["mean"] == pytest.approx(mean(with_), abs=1e-4)


@pytest.fixture(scope="module")
def single_run(make_skilleval_cli, tmp_path_factory):  # noqa: ANN001, ANN201
    return make_skilleval_cli(tmp_path_factory.mktemp("one-run"))


def test_a_lower_bound_gate_on_one_run_cannot_pass(single_run) -> None:  # noqa: ANN001
    """One eval, one run per arm: no interval, so gate.on=lower cannot be checked (exit 3)
    rather than passing on a zero-width "interval"; the table prints n/a for it."""
    args = ("+experiment=functional_eval", f"skill={CSV_TIDY}", "functional.only=[1]",
            "functional.runs=1", "functional.analyze=false", "progress=false")
    r = single_run.run(*args, "gate.min_delta=-1", "gate.on=lower", check=3)
    assert "gate.min_delta" in r.stderr and "interval" in r.stderr
    assert re.search(r"[+-]\d\.\d\d \(CI n/a: too few runs\)", r.stdout)
    [bench] = [p for p in single_run.outputs.rglob("benchmark.json") if "workspace" not in p.parts]
    pr = json.loads(bench.read_text())["delta_stats"]["pass_rate"]
    assert pr["delta"] is not None and pr["low"] is None
    # the point gate is still checkable
    single_run.run(*args, "gate.min_delta=-1", check=0)


def test_the_baseline_gate_uses_the_functional_confidence(skilleval_cli) -> None:  # noqa: ANN001
    """functional.confidence=0.8: the run's interval is an 80 % one, and the baseline gate's
    significance level must be the same 0.2 (it read trigger.confidence, 0.95)."""
    args = ("+experiment=functional_eval", f"skill={CSV_TIDY}", "functional.only=[1]",
            "functional.runs=2", "functional.analyze=false", "progress=false",
            "functional.confidence=0.8")
    skilleval_cli.run(*args, check=0)
    r = skilleval_cli.run(*args, "gate.baseline=latest", "gate.max_regression=0.05", check=0)
    assert "p >= 0.2)" in r.stdout, r.stdout


def test_markdown_and_junit_show_errored_executions_never_a_zero() -> None:
    """An eval whose every execution errored in one arm: the markdown summary crashed on its
    missing mean, and junit.xml had no testcase for it (the errors were invisible)."""
    from skilleval.reporting.junit import functional_suite
    from skilleval.reporting.markdown import functional_md
    from tests.shared_helpers import report_job

    runs = [_run("x", "with_skill", 1, None, "error"), _run("x", "with_skill", 2, None, "timeout"),
            _run("x", "without_skill", 1, 0.5), _run("x", "without_skill", 2, 0.5),
            _run("y", "with_skill", 1, 1.0), _run("y", "with_skill", 2, None, "error"),
            _run("y", "without_skill", 1, 0.5)]
    for r in runs:
        if r["status"] == "ok":
            r["result"].update(passed=int(r["result"]["pass_rate"] * 2), failed=2 - int(r["result"]["pass_rate"] * 2))
    b = build_benchmark(runs, {"skill_name": "s"}, "with_skill", "without_skill", n_boot=50)
    job = report_job()
    text = functional_md(job, b, 20)
    x = next(ln for ln in text.splitlines() if ln.startswith("| x |"))
    assert x == "| x | insufficient: 0 valid (2 errored) | 50% | n/a |"
    assert "with\\_skill: 2 / 1" in text  # errors / timeouts per arm
    suite = functional_suite(job, b)
    cases = {c.name: c for c in suite}
    assert "x [with_skill]" in cases
    [err] = cases["x [with_skill]"].result
    assert type(err).__name__ == "Error" and "2 errored" in err.message
    assert "1 errored/timed-out executions not counted" in cases["y [with_skill]"].system_out


def test_small_permutation_tests_are_exact() -> None:
    """Few enough arrangements to list: the p-value is the exact one (it was a Monte Carlo
    estimate, 0.0878 for an exact 0.0857), for one eval against scipy and for two evals
    against a brute-force listing of every joint arrangement."""
    import itertools

    import numpy as np

    w, wo = [0.5, 1.0, 0.75, 1.0], [0.25, 0.5, 0.25]
    ref = sps.permutation_test((w, wo), lambda x, y: abs(np.mean(x) - np.mean(y)),
                               permutation_type="independent", alternative="greater",
                               n_resamples=np.inf).pvalue
    assert stratified_permutation_p({"e": w}, {"e": wo}) == pytest.approx(ref, abs=1e-12)
    prim = {"a": [1.0, 0.5, 1.0], "b": [0.0, 0.5]}
    base = {"a": [0.5, 0.0], "b": [0.0, 0.0, 0.5]}

    def stat(split: dict) -> float:
        return np.mean([np.mean(split[e][0]) - np.mean(split[e][1]) for e in prim])

    per_eval = {}
    for e in prim:
        pooled, k = prim[e] + base[e], len(prim[e])
        per_eval[e] = [([pooled[i] for i in c], [pooled[i] for i in range(len(pooled)) if i not in c])
                       for c in itertools.combinations(range(len(pooled)), k)]
    observed = stat({e: (prim[e], base[e]) for e in prim})
    joint = [stat(dict(zip(prim, combo))) for combo in itertools.product(*per_eval.values())]
    brute = np.mean([abs(t) >= abs(observed) - 1e-12 for t in joint])
    assert stratified_permutation_p(prim, base) == pytest.approx(brute, abs=1e-12)
    # beyond the listing limit it stays a Monte Carlo estimate of the same p-value
    assert stratified_permutation_p(prim, base, n_resamples=20, seed=1) == pytest.approx(brute, abs=0.3)
