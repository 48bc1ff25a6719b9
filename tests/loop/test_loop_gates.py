"""Audit of the CI path: a gate that could not be checked is reported as not checked.

`gate.baseline=latest` on a store with no earlier run (main's first CI run) skips the
regression gate and exits 0, by design; but junit.xml said "no gates: no gate applied" and
summary.md (the PR comment) said nothing at all, so the check read as green and gated."""
from __future__ import annotations

import json

import pytest

from junitparser import Failure, JUnitXml, Skipped


def test_an_unchecked_baseline_gate_is_said_in_junit_markdown_and_terminal(skilleval_cli) -> None:  # noqa: ANN001
    p = skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false",
                          "gate.baseline=latest", "gate.max_regression=0.05", "gate.min_accuracy=0.1",
                          "reporter=[console,json,junit,markdown]", check=0)
    assert "gate not checked: change vs baseline: no earlier run" in p.stdout + p.stderr
    [junit] = list(skilleval_cli.outputs.rglob("junit.xml"))
    suite = next(s for s in JUnitXml.fromfile(str(junit)) if s.name.startswith("gates"))
    cases = {c.name: c for c in suite}
    assert set(cases) == {"gate.min_accuracy", "gate.max_regression"}
    [skip] = cases["gate.max_regression"].result
    assert isinstance(skip, Skipped) and skip.message.startswith("not checked: no earlier run")
    assert cases["gate.min_accuracy"].result == []
    md = next(skilleval_cli.outputs.rglob("summary.md")).read_text(encoding="utf-8")
    assert "**Gates: passed** (1/1 passed; 1 not checked)" in md
    assert "| `gate.max_regression` |" in md and md.rstrip().endswith("| not checked |")
    run = json.loads(skilleval_cli.run("sql", "select summary_json from runs", "--format", "json",
                                       check=0).stdout)[-1]
    gates = json.loads(run["summary_json"])["gates"]
    assert {g["gate"]: g["checked"] for g in gates} == {"gate.min_accuracy": True, "gate.max_regression": False}


def test_a_gate_line_says_how_many_queries_had_no_verdict(skilleval_cli) -> None:  # noqa: ANN001
    """With errors, queries short of valid runs have no verdict and leave every metric; a
    gate on accuracy measured over the rest read as if over the eval set ("13/15 queries")."""
    p = skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=2", "trigger.min_valid=2",
                          "backend.error_rate=0.25", "progress=false", "reporter=[json]",
                          "gate.min_accuracy=0.01", "gate.min_recall=0.0", check=0)
    [res] = skilleval_cli.results()
    rows = json.loads(res.read_text())["results"]
    none = [r for r in rows if r["verdict"] == "insufficient"]
    assert none, "the injected errors should leave some query without a verdict"
    acc = next(ln for ln in p.stdout.splitlines() if "(gate.min_accuracy)" in ln)
    assert f"; {len(none)} without a verdict (too few valid runs) not counted)" in acc, acc
    recall = next(ln for ln in p.stdout.splitlines() if "(gate.min_recall)" in ln)
    n_should = sum(1 for r in none if r["should_trigger"])
    assert (f"; {n_should} without a verdict" in recall) == bool(n_should), recall


def test_a_min_delta_gate_says_over_how_many_evals(skilleval_cli) -> None:  # noqa: ANN001
    """A functional delta covers only the evals graded in both arms; an eval an arm had too
    few valid executions of is left out. The gate's line said neither."""
    from skilleval.sim.process import SimProcess

    with SimProcess() as sim:
        sim.configure(fail_next=[400])
        p = skilleval_cli.run("+experiment=functional_eval", "functional.bootstrap=100", "functional.runs=2",
                              "functional.min_valid=2", "functional.analyze=false", "backend=anthropic_api",
                              f"backend.base_url={sim.url}", "backend.max_retries=0", "functional.only=[1,2]",
                              "functional.concurrency=1", "progress=false", "gate.min_delta=-1", check=0,
                              timeout=300)
    line = next(ln for ln in p.stdout.splitlines() if "(gate.min_delta)" in ln)
    assert "(over 1 paired eval(s); 1 insufficient (too few valid executions) not counted)" in line, line


def test_each_gate_is_judged_alone_when_one_figure_is_undefined(skilleval_cli) -> None:  # noqa: ANN001
    """Precision with no query triggered is undefined; it used to stop every gate, so a recall
    gate that had measured 0/10 read "not checked", the run exited 3 and was stored as a
    harness error (invisible to diff latest~1 and to later baselines). Now recall fails (exit
    1) and precision alone is not checked."""
    p = skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false",
                          "gate.min_precision=0.5", "gate.min_recall=0.1", "reporter=[json,junit,markdown]", check=1)
    assert "skilleval: error: gate.min_precision: precision could not be measured" in p.stderr
    assert "gate FAILED: recall: measured 0.000" in p.stderr
    [junit] = list(skilleval_cli.outputs.rglob("junit.xml"))
    suite = next(s for s in JUnitXml.fromfile(str(junit)) if s.name.startswith("gates"))
    got = {c.name: c.result[0] for c in suite}
    assert isinstance(got["gate.min_precision"], Skipped) and "precision could not be measured" in got["gate.min_precision"].message
    assert isinstance(got["gate.min_recall"], Failure)
    md = next(skilleval_cli.outputs.rglob("summary.md")).read_text(encoding="utf-8")
    assert "**Gates: FAILED** (0/1 passed; 1 not checked)" in md
    assert "not checked: not checked" not in md + junit.read_text()


def test_an_undefined_gated_figure_alone_exits_3_and_the_run_stays_diffable(skilleval_cli) -> None:  # noqa: ANN001
    p = skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false",
                          "gate.min_precision=0.5", "reporter=[json,markdown]", check=3)
    assert "precision could not be measured" in p.stderr
    md = next(skilleval_cli.outputs.rglob("summary.md")).read_text(encoding="utf-8")
    assert "**Gates: NOT CHECKED** (0/0 passed; 1 not checked)" in md
    rows = json.loads(skilleval_cli.run("sql", "select status from runs", "--format", "json", check=0).stdout)
    assert [r["status"] for r in rows] == ["gate_unchecked"]
    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false", check=0)
    d = skilleval_cli.run("diff", "latest~1", "latest", check=0)  # the measurement was whole
    assert "accuracy" in d.stdout, d.stdout + d.stderr


# a budget stop (exit 4), and trigger.max_error_rate's exit 3, which left junit.xml and
# summary.md without the gate
UNCHECKED = {
    "budget stop": (("trigger.runs=3", "budget.max_calls=25", "gate.min_recall=0.1"), 4, "stopped by the budget"),
    "too many errors": (("trigger.runs=2", "backend.error_rate=0.7", "gate.min_recall=0.3"), 3,
                        "errored or timed out"),
}


@pytest.mark.parametrize("case", list(UNCHECKED))
def test_gates_of_a_run_that_measured_nothing_usable_are_reported_not_checked(skilleval_cli, case: str) -> None:  # noqa: ANN001
    args, code, why = UNCHECKED[case]
    skilleval_cli.run("+experiment=trigger_eval", "progress=false", *args, "reporter=[json,junit,markdown]",
                      check=code)
    [junit] = list(skilleval_cli.outputs.rglob("junit.xml"))
    suite = next(s for s in JUnitXml.fromfile(str(junit)) if s.name.startswith("gates"))
    [case_] = list(suite)
    assert case_.name == "gate.min_recall" and isinstance(case_.result[0], Skipped)
    assert why in case_.result[0].message
    md = next(skilleval_cli.outputs.rglob("summary.md")).read_text(encoding="utf-8")
    assert "**Gates: not checked** (0/0 passed; 1 not checked)" in md


def test_trigger_opt_gates_say_which_run_and_what_was_measured(skilleval_cli, tmp_path) -> None:  # noqa: ANN001
    """A trigger_opt summary.md held only "**Gates: passed**" and a table (no heading naming
    the skill or run, unlike trigger_eval's), its junit suite was called "gates", and the gate
    said "accuracy" of what it did not say."""
    from junitparser import JUnitXml

    skilleval_cli.run("+experiment=trigger_opt", "reporter=[console,json,junit,markdown]", "gate.min_accuracy=0.5",
                      "optimize.max_iterations=1", "progress=false", check=0)
    text = next(skilleval_cli.outputs.rglob("summary.md")).read_text()
    assert text.startswith("### skilleval trigger\\_opt: changelog-writer\n"), text
    assert "Run `" in text and "accuracy of the best description on the held-out test" in text, text
    junit = next(skilleval_cli.outputs.rglob("junit.xml"))
    assert [s.name for s in JUnitXml.fromfile(str(junit))] == ["gates: trigger_opt: changelog-writer"]
