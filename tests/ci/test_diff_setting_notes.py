"""`skilleval diff` of two trigger runs that differ in a verdict-shaping setting says so
once per setting: the threshold (its own note, from the per-query rows), and the backend,
model or policy, which used to pass without a word (a model change read as the description's
doing)."""
from __future__ import annotations

import json

RUN = ("+experiment=trigger_eval", "trigger.runs=1", "reporter.console.show_queries=false")


def test_diff_names_the_settings_the_runs_differ_in(skilleval_cli) -> None:  # noqa: ANN001
    skilleval_cli.run(*RUN, "trigger.threshold=0.3", check=0)
    skilleval_cli.run(*RUN, "trigger.threshold=0.5", "backend.model=sim-2", check=0)
    table = skilleval_cli.run("diff", "latest~1", "latest", check=0).stdout
    assert "differ in model (A sim-1, B sim-2)" in table, table
    notes = [ln for ln in table.splitlines() if ln.startswith("note:")]
    assert sum("threshold" in ln for ln in notes) == 1, notes  # one note, not two
    first = str(skilleval_cli.results()[0])
    doc = json.loads(skilleval_cli.run("diff", first, "latest", "--format", "json", check=0).stdout)
    assert any("model (A sim-1, B sim-2)" in n for n in doc["notes"]), doc["notes"]
    same = skilleval_cli.run("diff", "latest", "latest", check=0).stdout
    assert "differ in" not in same, same
