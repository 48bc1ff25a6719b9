"""``optimize.prescreen``: the plan counts only the candidates the proxy lets through to the
paid backend, and a prescreen that cannot drop anything says so instead of doing nothing."""
from __future__ import annotations

import json
import re


def _need(r) -> int:  # noqa: ANN001
    m = re.search(r"need up to (\d+) calls", r.stderr)
    assert m, r.stderr
    return int(m.group(1))


def test_plan_counts_only_the_prescreened_candidates(skilleval_cli) -> None:
    base = ("+experiment=trigger_opt", "progress=false", "budget.max_calls=0", "optimize.candidates=4")
    plain = skilleval_cli.run(*base, check=2)
    screened = skilleval_cli.run(*base, "optimize.prescreen=embed", check=2)
    # the original (45) and final test (30) are the same; the round pays for 1 candidate's
    # screen run (15 train+validation queries) instead of 4 of them: 45 calls fewer
    assert _need(plain) - _need(screened) == 3 * 15
    assert "1 of them past the embed prescreen" in screened.stderr


def test_a_prescreen_with_nothing_to_drop_says_so(skilleval_cli) -> None:
    r = skilleval_cli.run("+experiment=trigger_opt", "progress=false", "budget.max_calls=0",
                          "optimize.prescreen=embed", check=2)
    assert "screens nothing" in r.stdout + r.stderr


def test_with_attribution_the_plan_claims_no_bound_it_cannot_keep(skilleval_cli) -> None:
    """optimize.attribution=true on a one-sentence original: the plan said 'per iteration
    ≤48 calls' and nothing of attribution, then one leave-one-out table of a 3-sentence
    incumbent alone spent 98 calls. Its size depends on incumbents not yet proposed, so
    the plan gives estimates and says what attribution costs."""
    r = skilleval_cli.run("+experiment=trigger_opt", "progress=false", "proposer=llm",
                          "optimize.attribution=true", check=0)
    [plan] = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith("plan:")]
    assert "per iteration ≈" in plan and "total ≈" in plan and "attribution ≈" in plan, plan
    spent = json.loads(next(skilleval_cli.outputs.rglob("results.json")).read_text())["attribution"]
    assert spent["calls_made"] + spent["calls_cached"] > 0
