"""Issue 8: every number right, every failure said out loud (functional evals)."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from skilleval.functional.benchmark import build_benchmark, render_md
from skilleval.functional.comparator import comparison_file, sign_test_by_eval
from skilleval.sim.process import SimProcess


def _result(w1: str, w2: str) -> dict:
    order1 = {"winner": "A", "reasoning": "A looked better", "rubric": {}}
    return {"order1": order1, "order1_winner_arm": w1, "order2_winner_arm": w2,
            "winner_arm": w1 if w1 == w2 else "TIE", "consistent": w1 == w2}


def test_comparison_file_says_tie_when_the_orders_disagree() -> None:
    tie = comparison_file(_result("with_skill", "without_skill"), "with_skill", "without_skill")
    assert tie["winner"] == "TIE" and tie["order1_winner"] == "A"
    assert tie["both_orders"]["consistent"] is False
    won = comparison_file(_result("without_skill", "without_skill"), "with_skill", "without_skill")
    assert won["winner"] == "B"


def test_sign_test_counts_evals_not_repeats() -> None:
    # one eval, six repeats all won by the primary: one eval won, not six independent wins
    assert sign_test_by_eval({"e1": Counter(with_skill=6)}, "with_skill", "without_skill") == 1.0
    five = {f"e{i}": Counter(with_skill=2, without_skill=1) for i in range(6)}
    assert abs(sign_test_by_eval(five, "with_skill", "without_skill") - 0.03125) < 1e-9
    split = {"e1": Counter(with_skill=1, without_skill=1), "e2": Counter(TIE=3)}
    assert sign_test_by_eval(split, "with_skill", "without_skill") is None


# -- item 1: an errored execution is not a failed skill ----------------------------------------


def _entry(ev: str, cfg: str, n: int, pass_rate: float | None, *, status: str = "ok",
           seconds: float = 10.0, tokens: int = 1000, fired: bool | None = None) -> dict:
    if status not in ("ok", "turn_cap"):
        return {"eval_id": ev, "eval_name": ev, "configuration": cfg, "run_number": n,
                "status": status, "error": "HTTP 400", "time_seconds": 0.1, "tokens": 0}
    return {"eval_id": ev, "eval_name": ev, "configuration": cfg, "run_number": n, "status": status,
            "result": {"pass_rate": pass_rate, "passed": 0, "failed": 0, "total": 1,
                       "time_seconds": seconds, "tokens": tokens, "judge_errors": 0},
            "expectations": [], "skill_fired": fired}


def test_errored_runs_enter_no_statistic() -> None:
    runs = [_entry("a", "with_skill", 1, 1.0, fired=True), _entry("a", "with_skill", 2, None, status="error"),
            _entry("a", "without_skill", 1, 0.5), _entry("a", "without_skill", 2, 0.5),
            _entry("b", "with_skill", 1, 1.0, fired=True), _entry("b", "without_skill", 1, 0.0)]
    b = build_benchmark(runs, {}, "with_skill", "without_skill", n_boot=50)
    assert [r["status"] for r in b["errored_runs"]] == ["error"]
    assert all(r["status"] == "ok" for r in b["runs"]) and len(b["runs"]) == 5
    s = b["run_summary"]["with_skill"]
    assert s["pass_rate"]["mean"] == 1.0 and s["time_seconds"]["min"] == 10.0 and s["tokens"]["min"] == 1000
    assert b["delta_stats"]["pass_rate"]["delta"] == 0.75  # (0.5 + 1.0) / 2: the error is no 0
    assert b["skill_fired"]["with_skill"] == {"fired": 2, "runs": 2}
    assert b["execution_errors"]["with_skill"]["error"] == 1
    assert b["execution_errors"]["with_skill"]["valid"] == 2
    assert any("1 execution(s) errored" in n for n in b["notes"])


def test_an_arm_with_too_few_valid_runs_is_insufficient() -> None:
    runs = [_entry("a", "with_skill", 1, 1.0), _entry("a", "with_skill", 2, None, status="timeout"),
            _entry("a", "without_skill", 1, 0.0), _entry("a", "without_skill", 2, 0.0),
            _entry("b", "with_skill", 1, 0.5), _entry("b", "with_skill", 2, 0.5),
            _entry("b", "without_skill", 1, 0.0), _entry("b", "without_skill", 2, 0.0)]
    b = build_benchmark(runs, {}, "with_skill", "without_skill", n_boot=50, min_valid=2)
    rows = {r["eval_name"]: r for r in b["per_eval"]}
    assert rows["a"]["with_skill"]["insufficient"] and rows["a"]["delta_pass_rate"] is None
    assert b["delta_stats"]["paired_evals"] == ["b"] and b["delta_stats"]["pass_rate"]["delta"] == 0.5
    assert "insufficient: 1 valid (1 errored or timed out)" in render_md(b)
    assert b["execution_errors"]["with_skill"]["timeout"] == 1


def test_an_arm_with_no_valid_run_has_no_mean_and_no_pooled_delta() -> None:
    """The issue's HTTP 400 case: the errored arm must not read as 0 %, not even in the
    skill-creator-shaped run_summary the viewer shows (it printed -0.80 there)."""
    runs = [_entry("a", "with_skill", 1, None, status="error"), _entry("a", "without_skill", 1, 0.8)]
    b = build_benchmark(runs, {}, "with_skill", "without_skill", n_boot=50)
    assert b["run_summary"]["with_skill"]["pass_rate"]["mean"] is None
    assert b["run_summary"]["delta"] == {"pass_rate": "n/a", "time_seconds": "n/a", "tokens": "n/a"}
    assert b["delta_stats"]["pass_rate"]["delta"] is None and b["delta_stats"]["paired_evals"] == []
    assert "| Pass Rate | n/a | n/a | n/a |" in render_md(b)


def test_benchmark_md_delta_is_the_one_its_interval_is_about() -> None:
    """Unbalanced evals (pooled delta 0.80, per-eval delta 0.50): every printed row must be
    A - B = Delta, and Delta must be the delta the interval was computed for. (4 vs 1 runs:
    3 vs 1 would be too few for a 95 % interval, see stats.smallest_permutation_p.)"""
    runs = [_entry("a", "with_skill", k, 1.0) for k in (1, 2, 3, 4)] + [_entry("a", "without_skill", 1, 0.0)] + \
        [_entry("b", "with_skill", 1, 0.0)] + [_entry("b", "without_skill", k, 0.0) for k in (1, 2, 3, 4)]
    b = build_benchmark(runs, {}, "with_skill", "without_skill", n_boot=200)
    assert b["run_summary"]["delta"]["pass_rate"] == "+0.80"  # skill-creator's pooled view, kept
    md = render_md(b)
    m = re.search(r"\| Pass Rate \| (\d+)% \| (\d+)% \| ([+-]\d\.\d\d) \[([+-]\d\.\d\d), ([+-]\d\.\d\d)\] \|", md)
    assert m, md
    a_, b_, delta = int(m.group(1)) / 100, int(m.group(2)) / 100, float(m.group(3))
    assert abs((a_ - b_) - delta) < 0.01 and delta == b["delta_stats"]["pass_rate"]["delta"] == 0.5
    assert float(m.group(4)) <= delta <= float(m.group(5))


@pytest.fixture(scope="module")
def sim400():  # noqa: ANN201
    with SimProcess() as sim:
        yield sim


def test_http_400_is_an_error_not_a_failed_skill(skilleval_cli, sim400) -> None:
    """The issue's case: one HTTP 400 with retries off gave delta -0.80 and blamed the skill."""
    sim400.configure(fail_next=[400])
    p = skilleval_cli.run("+experiment=functional_eval", "functional.bootstrap=100", "functional.runs=2",
                          "functional.analyze=false", "backend=anthropic_api",
                          f"backend.base_url={sim400.url}", "backend.max_retries=0",
                          "functional.only=[2]", "functional.concurrency=1", check=0, timeout=300)
    it = sorted(skilleval_cli.outputs.rglob("iteration-*"))[-1]
    b = json.loads((it / "benchmark.json").read_text())
    [bad] = b["errored_runs"]
    assert bad["status"] == "error" and "400" in bad["error"]
    assert len(b["runs"]) == 3 and all(r["status"] == "ok" for r in b["runs"])
    arm = bad["configuration"]
    assert b["execution_errors"][arm]["error"] == 1 and b["execution_errors"][arm]["valid"] == 1
    # the delta is computed from valid runs only
    rate = {c: [r["result"]["pass_rate"] for r in b["runs"] if r["configuration"] == c]
            for c in ("with_skill", "without_skill")}
    expect = sum(rate["with_skill"]) / len(rate["with_skill"]) - sum(rate["without_skill"]) / len(rate["without_skill"])
    assert abs(b["delta_stats"]["pass_rate"]["delta"] - expect) < 1e-3
    assert all(v > 0 for vs in rate.values() for v in vs)  # no run is a fake 0
    # the workspace: skill-creator's aggregator skips a run folder without grading.json
    run = it / "eval-vendor-tsv-encoding" / arm / f"run-{bad['run_number']}"
    assert not (run / "grading.json").exists()
    assert json.loads((run / "execution_error.json").read_text())["graded"] is False
    assert len(list(it.rglob("grading.json"))) == 3
    assert re.search(r"errored / timed out\s+│?\s*1 / 0", p.stdout), p.stdout
    # and the store holds no grade for the errored execution
    n = skilleval_cli.run("sql", f"select count(*) as n from grades where execution_key = '{bad['execution_key']}'",
                          "--format", "json", check=0)
    assert json.loads(n.stdout)[0]["n"] == 0
    # skilleval's own importer reads the marker back: an error, with no grades
    other = str(skilleval_cli.cwd / "imported-store")
    skilleval_cli.run("import", str(it), "--store", other, check=0)
    rows = json.loads(skilleval_cli.run("sql", "select status, count(*) as n from executions group by 1 order by 1",
                                        "--format", "json", env={"SKILLEVAL_STORE": other}, check=0).stdout)
    assert rows == [{"status": "error", "n": 1}, {"status": "ok", "n": 3}]


# -- item 10: the stub never invents another skill's work; the CLI path really works ----------

CHANGELOG = Path(__file__).resolve().parents[2] / "experiments" / "changelog-writer"


def test_stub_refuses_a_task_it_cannot_simulate(skilleval_cli) -> None:  # noqa: ANN001
    p = skilleval_cli.run("+experiment=functional_eval", f"skill={CHANGELOG}", "functional.runs=1",
                          "functional.analyze=false", timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    [line] = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert "backend=stub cannot simulate eval" in line and "a real backend is needed" in line
    assert "Traceback" not in p.stderr
    assert not list(skilleval_cli.outputs.rglob("*.csv"))  # nothing invented, nothing run


def test_no_output_in_any_arm_is_flagged_and_exits_3(skilleval_cli, sim400) -> None:  # noqa: ANN001
    """A real backend on a task the simulated model cannot do: it writes nothing, and a run
    where no arm wrote a file must not pass as a measurement (exit 3, flagged)."""
    sim400.configure(fail_next=[])
    p = skilleval_cli.run("+experiment=functional_eval", f"skill={CHANGELOG}", "functional.runs=1",
                          "functional.only=[1]", "functional.analyze=false", "functional.bootstrap=100",
                          "backend=anthropic_api", f"backend.base_url={sim400.url}", timeout=300)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "no arm wrote any output file" in p.stderr
    b = json.loads(sorted(skilleval_cli.outputs.rglob("benchmark.json"))[-1].read_text())
    assert b["flags"] and "no arm wrote any output file" in b["flags"][0]


def test_functional_eval_with_the_real_cli_against_serve_sim(skilleval_cli, sim400, claude_bin) -> None:  # noqa: ANN001
    # sim-1 at $1000 / M input tokens: an execution priced by our table costs at least its
    # input at the cache-read rate ($100 / M); the CLI's own total prices sim-1 by its table
    prices = skilleval_cli.cwd / "dear.yaml"
    prices.write_text("models:\n  sim-1: {input: 1000.0, output: 0.0}\n")
    p = skilleval_cli.run("+experiment=functional_eval", "functional.runs=1", "functional.only=[1]",
                          "functional.analyze=false", "functional.bootstrap=100", "backend=claude_cli",
                          f"backend.executable={claude_bin}", f"backend.base_url={sim400.url}",
                          "backend.model=sim-1", f"backend.pricing_file={prices}", timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = json.loads(skilleval_cli.run("sql", "select input_tokens, cost_usd from executions",
                                        "--format", "json", check=0).stdout)
    assert len(rows) == 2 and all(r["input_tokens"] > 0 for r in rows)
    for r in rows:  # the table's price of the run's tokens, whatever the cache held
        assert 100e-6 * r["input_tokens"] <= r["cost_usd"] <= 2000e-6 * r["input_tokens"], rows
    it = sorted(skilleval_cli.outputs.rglob("iteration-*"))[-1]
    for arm in ("with_skill", "without_skill"):
        run = it / "eval-dedupe-contacts" / arm / "run-1"
        out = (run / "outputs" / "contacts_clean.csv").read_text()
        assert out.startswith("full_name,email,") and "@" in out
        grading = json.loads((run / "grading.json").read_text())
        assert grading["summary"]["total"] > 0 and grading["summary"]["passed"] > 0
    b = json.loads((it / "benchmark.json").read_text())
    assert b["skill_fired"]["with_skill"] == {"fired": 1, "runs": 1}


def test_every_execution_errored_is_counted_per_arm_and_exported(skilleval_cli, sim400) -> None:  # noqa: ANN001
    """All executions fail (HTTP 500, retries off): still exit 3, but the errors are counted
    per arm on stderr and in benchmark.json, and the workspace holds each errored run's
    marker (no grading.json, so no 0 % run for skill-creator's aggregator). Before, the run
    stopped with one line of error texts and wrote nothing."""
    sim400.configure(server_error_rate=1.0)
    try:
        p = skilleval_cli.run("+experiment=functional_eval", "functional.runs=1", "functional.only=[1]",
                              "functional.analyze=false", "functional.bootstrap=50", "backend=anthropic_api",
                              f"backend.base_url={sim400.url}", "backend.max_retries=0", timeout=300)
    finally:
        sim400.configure(server_error_rate=0.0)
    assert p.returncode == 3, p.stdout + p.stderr
    err = [ln for ln in p.stderr.splitlines() if ln.startswith("skilleval: error:")]
    assert len(err) == 1 and "with_skill: 0 valid, 1 errored" in err[0] and "without_skill: 0 valid, 1 errored" in err[0]
    assert "Traceback" not in p.stderr
    [bp] = skilleval_cli.outputs.rglob("iteration-1/benchmark.json")
    b = json.loads(bp.read_text())
    assert b["runs"] == [] and len(b["errored_runs"]) == 2 and b["flags"]
    assert {a: (e["valid"], e["error"]) for a, e in b["execution_errors"].items()} == {
        "with_skill": (0, 1), "without_skill": (0, 1)}
    assert not list(bp.parent.rglob("grading.json"))
    assert len(list(bp.parent.rglob("execution_error.json"))) == 2


def test_compare_counts_the_pairs_an_errored_execution_left_uncompared(skilleval_cli, sim400) -> None:  # noqa: ANN001
    """compare built pairs from valid executions only and said nothing of the rest: an eval
    whose executions timed out read "0 | 0 | 0", like a judged draw, with exit 0."""
    sim400.configure(fail_next=[400])
    p = skilleval_cli.run("+experiment=compare", "functional.runs=2", "backend=anthropic_api",
                          f"backend.base_url={sim400.url}", "backend.max_retries=0", "functional.only=[2]",
                          "functional.concurrency=1", "progress=false", check=0, timeout=300)
    [path] = list(skilleval_cli.outputs.rglob("comparison_summary.json"))[-1:]
    s = json.loads(path.read_text())
    assert s["pairs_planned"] == 2 and s["pairs"] == 1, s
    assert sum(c.get("error", 0) for c in s["executions"].values()) == 1, s["executions"]
    assert list(s["pairs_not_compared"].values()) == [1], s
    out = " ".join(p.stdout.split())
    assert "1 of 2 pairs not compared" in out and "errored or timed out" in out, p.stdout


def test_console_says_its_means_cover_only_the_evals_measured_in_both_arms(skilleval_cli, sim400) -> None:  # noqa: ANN001
    """The arm means are over paired evals, the valid-execution counts over all: printed side
    by side with no word, tokens of one eval sat beside executions of two."""
    sim400.configure(fail_next=[400])
    p = skilleval_cli.run("+experiment=functional_eval", "functional.runs=1", "functional.analyze=false",
                          "backend=anthropic_api", f"backend.base_url={sim400.url}", "backend.max_retries=0",
                          "functional.only=[1,2]", "functional.concurrency=1", "progress=false", check=0, timeout=300)
    out = " ".join(p.stdout.split())
    assert "means over the 1 of 2 evals measured in both arms" in out, p.stdout
    assert "(1 errored or timed out)" in out, p.stdout
