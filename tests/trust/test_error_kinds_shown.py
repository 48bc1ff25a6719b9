"""Errors are counted *and shown*: a run against a real loopback API that answers some
requests with errors says which errors, how often, on the terminal and in results.json
(it used to print only "3 errors", leaving the reason to a hand-written SQL query)."""
from __future__ import annotations

import json


def test_errors_are_shown_by_kind(skilleval_cli, sim) -> None:  # noqa: ANN001
    sim.configure(fail_next=[500, 500, 400])
    r = skilleval_cli.run("+experiment=trigger_eval", "backend=anthropic_api", f"backend.base_url={sim.url}",
                          "backend.model=sim-1", "backend.max_retries=0", "trigger.self_check=false",
                          "trigger.runs=1", "trigger.concurrency=1", check=0)
    doc = json.loads(skilleval_cli.results()[-1].read_text())
    kinds = doc["metrics"]["error_kinds"]
    assert doc["metrics"]["errors"] == 3 and sum(kinds.values()) == 3, kinds
    assert sorted(kinds.values()) == [1, 2] and any("500" in k for k, n in kinds.items() if n == 2), kinds
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("errors by kind:"))
    assert "2×" in line and "500" in line and "400" in line, line
    # the store holds the same messages
    stored = skilleval_cli.run("sql", "select error, count(*) n from trials where outcome = 'error' "
                               "group by 1", "--format", "json", check=0).stdout
    assert {row["error"]: row["n"] for row in json.loads(stored)} == kinds
