"""README's serve-sim line, walked as a newcomer: the plan said "≤60 calls" and the summary then
said "66 new" (the six self-check controls). The plan line now promises them too."""
from __future__ import annotations

import json
import re


def test_plan_line_counts_the_self_check(skilleval_cli, sim) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", "backend=anthropic_api", f"backend.base_url={sim.url}",
                          "backend.model=sim-1", "trigger.runs=1", check=0)
    m = re.search(r"≤(\d+) calls \+ ≤(\d+) self-check", r.stdout + r.stderr)
    assert m, r.stdout + r.stderr
    made = json.loads(skilleval_cli.run("sql", "select calls_made from runs where status = 'done'",
                                        "--format", "json", check=0).stdout)[0]["calls_made"]
    assert int(m.group(1)) < made <= int(m.group(1)) + int(m.group(2))


def test_plan_line_has_no_self_check_on_the_stub(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", check=0)
    assert "≤20 calls" in r.stderr + r.stdout and "self-check" not in r.stderr + r.stdout
