"""`skilleval diff` of two runs that differ in a verdict-shaping setting (threshold, policy,
backend, model) says so: a query that flips at the same rate 1/3 -> 1/3 only because the
threshold moved used to read as the description's doing, with no word about the threshold."""
from __future__ import annotations

import json

RUN = ("+experiment=trigger_eval", "trigger.runs=1", "reporter.console.show_queries=false")


def test_diff_names_the_setting_the_runs_differ_in(skilleval_cli) -> None:  # noqa: ANN001
    skilleval_cli.run(*RUN, "trigger.threshold=0.3", check=0)
    skilleval_cli.run(*RUN, "trigger.threshold=0.5", check=0)
    table = skilleval_cli.run("diff", "latest~1", "latest", check=0).stdout
    assert "differ in threshold (A 0.3, B 0.5)" in table, table
    first = str(skilleval_cli.results()[0])
    doc = json.loads(skilleval_cli.run("diff", first, "latest", "--format", "json", check=0).stdout)
    assert any("threshold (A 0.3, B 0.5)" in n for n in doc["notes"]), doc["notes"]
    same = skilleval_cli.run("diff", "latest", "latest", check=0).stdout
    assert "differ in" not in same, same
