"""A functional eval whose evals have no expectation has no pass rate to compare: it printed
n/a everywhere, paid for its executions and exited 0. It is flagged and exits 3 (the outputs
stay in the workspace for a person to look at)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_no_expectation_anywhere_exits_3_and_says_so(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    skill = tmp_path / "csv-tidy"
    shutil.copytree(REPO / "experiments" / "csv-tidy", skill)
    evals = tmp_path / "f.json"
    evals.write_text(json.dumps({"evals": [{
        "id": 1, "prompt": "Clean evals/files/contacts.csv and write outputs/contacts_clean.csv",
        "files": ["evals/files/contacts.csv"], "expectations": []}]}))
    r = skilleval_cli.run("+experiment=functional_eval", f"skill={skill}", f"functional.evals={evals}",
                          "functional.runs=1", "functional.analyze=false", "progress=false", check=3)
    assert "no pass rate in both arms" in r.stderr and "Traceback" not in r.stderr
    bench = [p for p in skilleval_cli.outputs.rglob("benchmark.json") if "workspace" not in p.parts]
    assert json.loads(bench[0].read_text())["flags"]
    assert list(skilleval_cli.outputs.rglob("contacts_clean.csv"))  # there to look at


def _skill_creator_reading(run: Path) -> tuple[float, float]:
    """(time_seconds, tokens) of one run folder as skill-creator's aggregate_benchmark reads
    them (reference skill-creator.md §7.2): grading.json's timing.total_duration_seconds;
    only when that is 0 or missing, timing.json's total_duration_seconds and total_tokens;
    tokens still 0 fall back to execution_metrics.output_chars."""
    grading = json.loads((run / "grading.json").read_text())
    seconds = (grading.get("timing") or {}).get("total_duration_seconds", 0.0)
    tokens = 0
    if seconds == 0.0 and (run / "timing.json").exists():
        timing = json.loads((run / "timing.json").read_text())
        seconds, tokens = timing.get("total_duration_seconds", 0.0), timing.get("total_tokens", 0)
    if not tokens:
        tokens = (grading.get("execution_metrics") or {}).get("output_chars", 0)
    return seconds, tokens


def test_skill_creators_aggregator_reads_our_tokens_and_time(skilleval_cli) -> None:  # noqa: ANN001
    """It read the outputs' characters as tokens from our workspace: a +2354-token delta
    became -47 (grading.json carried a duration, so timing.json was never opened)."""
    skilleval_cli.run("+experiment=functional_eval", "functional.runs=2", "functional.only=[1]",
                      "functional.analyze=false", "progress=false", check=0)
    [it] = list(skilleval_cli.outputs.rglob("iteration-1"))
    bench = json.loads((it / "benchmark.json").read_text())
    ours = {(r["configuration"], r["run_number"]): (r["result"]["time_seconds"], r["result"]["tokens"])
            for r in bench["runs"]}
    theirs = {(run.parent.name, int(run.name.split("-")[1])): _skill_creator_reading(run)
              for run in it.glob("eval-*/*/run-*")}
    assert theirs and theirs == {k: (pytest.approx(v[0], abs=1e-3), v[1]) for k, v in ours.items()}


def test_one_run_shows_no_spread_in_benchmark_md() -> None:
    """'64% ± 0%' for an eval with one valid run read as perfect consistency."""
    from skilleval.functional.benchmark import build_benchmark, render_md

    def run(e: str, c: str, n: int, rate: float) -> dict:
        return {"eval_id": e, "eval_name": e, "configuration": c, "run_number": n, "status": "ok",
                "result": {"pass_rate": rate, "time_seconds": 1.0, "tokens": 1}, "expectations": []}
    md = render_md(build_benchmark([run("a", "with_skill", 1, 0.5), run("a", "without_skill", 1, 0.25),
                                    run("a", "without_skill", 2, 0.25)], {}, "with_skill",
                                   "without_skill", n_boot=10))
    row = next(ln for ln in md.splitlines() if ln.startswith("| a |"))
    assert "50% (1 run)" in row and "25% ± 0%" in row, row
    assert "with_skill 50% (1 run)" in md


def test_the_stubs_fault_knobs_reach_functional_executions(skilleval_cli) -> None:  # noqa: ANN001
    """backend.error_rate / timeout_rate did nothing in a functional eval on the stub (the
    module says it injects faults to exercise the error paths): 'errored / timed out 0 / 0'."""
    skilleval_cli.run("+experiment=functional_eval", "backend.error_rate=0.3", "backend.timeout_rate=0.1",
                      "functional.analyze=false", "progress=false", check=0)
    bench = [p for p in skilleval_cli.outputs.rglob("benchmark.json") if "workspace" not in p.parts]
    errs = json.loads(bench[0].read_text())["execution_errors"]
    assert sum(e["error"] for e in errs.values()) > 0 and sum(e["timeout"] for e in errs.values()) > 0, errs


def test_statistics_use_the_exact_pass_rates_not_the_rounded_ones() -> None:
    """benchmark.json stores pass rates rounded to 4 places; the permutation test read those,
    and exact ties (1/3 and 1/3) became near-ties, shifting p (0.2453 for 0.2500)."""
    from skilleval.functional.benchmark import build_benchmark
    from skilleval.stats import stratified_permutation_p

    def run(e: str, c: str, n: int, passed: int, total: int) -> dict:
        return {"eval_id": e, "eval_name": e, "configuration": c, "run_number": n, "status": "ok",
                "result": {"pass_rate": round(passed / total, 4), "passed": passed, "failed": total - passed,
                           "total": total, "time_seconds": 1.0, "tokens": 1}, "expectations": []}
    # every arm's mean is exactly 1/3 (a delta of exactly 0: p = 1); rounded, 0.3333 x 3
    # against 0, 0, 1 is a delta of -0.00003, and arrangements that tie exactly stop tying
    with_ = {"a": [(1, 3), (1, 3), (1, 3)], "b": [(2, 6), (2, 6), (2, 6)]}
    without = {"a": [(0, 3), (0, 3), (3, 3)], "b": [(0, 6), (6, 6), (0, 6)]}
    runs = [run(e, "with_skill", i, *pt) for e, v in with_.items() for i, pt in enumerate(v, 1)]
    runs += [run(e, "without_skill", i, *pt) for e, v in without.items() for i, pt in enumerate(v, 1)]
    b = build_benchmark(runs, {}, "with_skill", "without_skill", n_boot=10)
    exact = stratified_permutation_p({e: [p / t for p, t in v] for e, v in with_.items()},
                                     {e: [p / t for p, t in v] for e, v in without.items()})
    assert b["delta_stats"]["pass_rate"]["p_value"] == pytest.approx(exact, abs=1e-9)
