"""Audit of `skilleval diff`: which side is before, and labels on every rate that is not an
unbiased fixed-run rate (early-stopped, partial) or whose verdicts follow another rule."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from skilleval.stats import NEWCOMBE_FALLBACK, independent_diff_interval, paired_ratio_delta

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "experiments" / "changelog-writer"


@pytest.fixture(scope="module")
def runs(make_skilleval_cli, tmp_path_factory):  # noqa: ANN001, ANN201
    cli = make_skilleval_cli(tmp_path_factory.mktemp("diff-audit"))
    common = ("+experiment=trigger_eval", f"skill={SKILL}", "progress=false", "trigger.runs=5")
    cli.run(*common, check=None)                              # fixed
    cli.run(*common, "trigger.policy=decided", check=None)    # early-stopped rates
    cli.run(*common, "trigger.threshold=0.8", check=None)     # another verdict rule
    ids = [r["run_id"] for r in json.loads(cli.run(
        "sql", "select run_id from runs order by ts", "--format", "json", check=0).stdout)]
    return cli, ids


def _diff(cli, a: str, b: str) -> dict:  # noqa: ANN001
    return json.loads(cli.run("diff", a, b, "--format", "json", check=0).stdout)


def test_early_stopped_rates_are_labelled_in_the_diff(runs) -> None:  # noqa: ANN001
    cli, (fixed, decided, _) = runs
    d = _diff(cli, fixed, decided)
    stopped = [q for q in d["queries"] if q["after"]["early_stopped"]]
    assert stopped and not any(q["before"]["early_stopped"] for q in d["queries"])
    assert any(f"B: {len(stopped)} query(ies) stopped early" in n for n in d["notes"])
    # verdicts are the same under both policies (proved exhaustively elsewhere): no flip
    assert d["mcnemar"]["fixed"] == d["mcnemar"]["regressed"] == 0
    table = cli.run("diff", fixed, decided, check=0).stdout
    assert "stopped early" in table
    # sides swap with the arguments: A is before
    back = _diff(cli, decided, fixed)
    assert any(q["before"]["early_stopped"] for q in back["queries"])
    assert any(n.startswith("A: ") and "stopped early" in n for n in back["notes"])


def test_a_threshold_change_is_said(runs) -> None:  # noqa: ANN001
    cli, (fixed, _, strict) = runs
    d = _diff(cli, fixed, strict)
    assert any("different thresholds" in n and "0.5" in n and "0.8" in n for n in d["notes"])
    # flips here come from the rule; the sign still reads B − A
    acc = d["deltas"]["accuracy"]
    assert acc["delta"] == pytest.approx(acc["after"] - acc["before"], abs=1e-4)
    assert not any("different thresholds" in n for n in _diff(cli, fixed, fixed)["notes"])


def test_a_budget_stopped_run_is_partial_in_the_diff(runs) -> None:  # noqa: ANN001
    cli, (fixed, _, _) = runs
    # a sixth and seventh run per query are new calls (the first five are in the store)
    cli.run("+experiment=trigger_eval", f"skill={SKILL}", "progress=false", "trigger.runs=7",
            "trigger.concurrency=1", "budget.max_calls=7", check=4)
    stopped = json.loads(cli.run("sql", "select run_id from runs where status = 'budget_stopped'",
                                 "--format", "json", check=0).stdout)[0]["run_id"]
    d = json.loads(cli.run("diff", fixed, stopped, "--format", "json", "--common", check=0).stdout)
    assert any("budget_stopped" in n and "partial" in n for n in d["notes"])


def test_functional_diff_leaves_out_what_the_run_called_insufficient(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """functional.min_valid=2: an eval with one valid execution in an arm is "insufficient" in
    the run's own benchmark (out of its delta); the diff must not bring it back in."""
    from skilleval.functional.benchmark import build_benchmark

    def run(ev: str, cfg: str, n: int, rate: float | None, status: str = "ok") -> dict:
        r = {"eval_id": ev, "eval_name": ev, "configuration": cfg, "run_number": n, "status": status}
        if status == "ok":
            r.update(result={"pass_rate": rate, "time_seconds": 1.0, "tokens": 10}, expectations=[])
        return r

    def bench(x_with: list) -> dict:
        runs = [run("x", "with_skill", i, v, "ok" if v is not None else "error") for i, v in enumerate(x_with)]
        runs += [run("x", "without_skill", i, 0.5) for i in range(2)]
        runs += [run("y", c, i, 0.5) for c in ("with_skill", "without_skill") for i in range(2)]
        return build_benchmark(runs, {"skill_name": "s"}, "with_skill", "without_skill",
                               n_boot=50, min_valid=2)

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    before = bench([0.0, None])  # x: one valid run of two in with_skill
    assert before["execution_errors"]["with_skill"]["insufficient_evals"] == ["x"]
    a.write_text(json.dumps(before))
    b.write_text(json.dumps(bench([1.0, 1.0])))
    d = json.loads(skilleval_cli.run("diff", str(a), str(b), "--format", "json", check=0).stdout)
    x = next(r for r in d["arms"]["with_skill"]["per_eval"] if r["eval"] == "x")
    assert x["runs_before"] == 0 and x["delta"] is None
    assert any("insufficient" in n for n in d["notes"])
    # its interval is over the one eval both runs measured, and the table says so (it said
    # "over 2 evals", and nothing about the eval left out)
    assert d["arms"]["with_skill"]["pass_rate"]["evals"] == 1
    assert any("with_skill: 1 of 2 evals" in n and n.endswith(": x") for n in d["notes"]), d["notes"]
    table = skilleval_cli.run("diff", str(a), str(b), check=0).stdout
    assert "over 1 evals" in " ".join(table.split()), table


def test_precision_delta_on_one_fired_query_bounds_nothing(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Both runs fire on one and the same query (a weak description): precision is 1/1 in
    both. The bootstrap kept only replicates holding that query and printed +0 [+0, +0]."""

    assert paired_ratio_delta([(1, 1), (0, 0), (0, 0)], [(1, 1), (0, 0), (0, 0)])[0] == (0.0, -1.0, 1.0)
    (d, lo, hi), _ = paired_ratio_delta([(1, 1), (0, 1), (0, 0)], [(1, 1), (0, 0), (0, 0)], n_boot=500)
    assert d == pytest.approx(0.5) and lo < hi  # two items carry denominators: an interval

    def results(fire: bool) -> dict:
        rows = [{"query": "update the changelog", "should_trigger": True, "triggers": 3, "runs": 3,
                 "trigger_rate": 1.0, "pass": True}]
        rows += [{"query": f"release notes {i}", "should_trigger": True, "triggers": int(fire and i == 0),
                  "runs": 3, "trigger_rate": 0.0, "pass": False} for i in range(4)]
        rows += [{"query": f"unrelated {i}", "should_trigger": False, "triggers": 0, "runs": 3,
                  "trigger_rate": 0.0, "pass": True} for i in range(5)]
        return {"skill_name": "s", "description": "d", "results": rows}

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(results(False)))
    b.write_text(json.dumps(results(False)))
    prec = json.loads(skilleval_cli.run("diff", str(a), str(b), "--format", "json",
                                        check=0).stdout)["deltas"]["precision"]
    assert (prec["delta"], prec["low"], prec["high"]) == (0.0, -1.0, 1.0)


def test_functional_diff_says_partial_and_a_model_change(skilleval_cli) -> None:  # noqa: ANN001
    """A budget-stopped functional run diffed as if complete (a -28 pp "regression" that was
    the budget's), and a stub run against another model's with no word about the model."""
    common = ("+experiment=functional_eval", "functional.runs=1", "functional.only=[1,2]", "progress=false")
    skilleval_cli.run(*common, "backend.model=sim-1", check=0)
    skilleval_cli.run(*common, "backend.model=sim-2", check=0)
    skilleval_cli.run(*common, "backend.model=sim-3", "budget.max_calls=1", check=4)
    ids = [r["run_id"] for r in json.loads(skilleval_cli.run(
        "sql", "select run_id from runs order by ts", "--format", "json", check=0).stdout)]
    d = json.loads(skilleval_cli.run("diff", ids[0], ids[1], "--format", "json", check=0).stdout)
    assert any("differ in model (A sim-1, B sim-2)" in n for n in d["notes"]), d["notes"]
    d = json.loads(skilleval_cli.run("diff", ids[0], ids[2], "--format", "json", "--common", check=0).stdout)
    assert any("is partial (budget stop" in n for n in d["notes"]), d["notes"]


def test_precision_at_its_bound_in_both_runs_gets_no_zero_width_interval() -> None:
    """Three fired queries, all right, in both runs: every bootstrap replicate is 1 - 1, and
    the diff printed "precision +0 pp [+0 pp, +0 pp]"."""

    before = [(1, 1), (1, 1), (0, 0), (0, 0)]
    after = [(1, 1), (1, 1), (1, 1), (0, 0)]
    (d, lo, hi), method = paired_ratio_delta(before, after)
    assert d == 0.0 and lo < -0.2 and hi > 0.2, (d, lo, hi)
    assert (d, lo, hi) == independent_diff_interval(2, 2, 3, 3) and method == NEWCOMBE_FALLBACK


def test_a_precision_interval_names_the_method_that_made_it(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Two runs alike query by query (6/9 precision in both): every bootstrap replicate is 0,
    so the interval is Newcombe's unpaired one, and the diff called it a paired bootstrap."""
    rows = [{"query": f"q{i}", "should_trigger": i < 6, "triggers": 3 if i < 9 else 0, "runs": 3,
             "trigger_rate": 1.0 if i < 9 else 0.0, "pass": i < 6 or i >= 9} for i in range(12)]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for f in (a, b):
        f.write_text(json.dumps({"skill_name": "s", "description": "d", "results": rows}))
    prec = json.loads(skilleval_cli.run("diff", str(a), str(b), "--format", "json",
                                        check=0).stdout)["deltas"]["precision"]
    assert prec["delta"] == 0.0 and prec["low"] < 0 < prec["high"]
    assert prec["method"] == NEWCOMBE_FALLBACK
