"""`reporter=[console,json,junit,markdown]` on trigger_opt ran, exited 0 and wrote neither
junit.xml nor summary.md: trigger_opt hands no report to reporters. Now refused before any
call with one line; with a gate set the junit file holds the gate results."""
from __future__ import annotations


def test_junit_on_trigger_opt_is_refused_before_any_call(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_opt", "reporter=[console,json,junit,markdown]")
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "reporter=junit,markdown" in lines[0] and "trigger_opt" in lines[0], lines
    assert not (skilleval_cli.store / "trials").exists(), "calls were made before the refusal"


def test_junit_on_trigger_opt_with_a_gate_holds_the_gate(skilleval_cli) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_opt", "reporter=[console,junit]", "gate.min_recall=0.1",
                      "trigger.runs=1", "optimize.max_iterations=1", check=0)
    [junit] = list(skilleval_cli.outputs.rglob("junit.xml"))
    assert "gate.min_recall" in junit.read_text()


def test_junit_on_trigger_eval_still_written(skilleval_cli) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", "reporter=[junit]", "trigger.runs=1", check=0)
    assert list(skilleval_cli.outputs.rglob("junit.xml"))
