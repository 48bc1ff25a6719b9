"""Regressions found in review of trigger_opt: resuming a budget-stopped run, the run key,
and insufficient queries in the paired comparison."""
from __future__ import annotations

from omegaconf import OmegaConf

from opt_helpers import EXAMPLE
from skilleval.datasets import load_trigger_cases
from skilleval.optimize.selection import QueryOutcome, compare
from skilleval.optimize.state import run_key
from skilleval.skills import load_skill

CMD = ("+experiment=trigger_opt", "optimize.patience=5", "optimize.alpha=0.001", "proposer=stub")


def test_budget_stopped_run_continues_with_a_larger_budget(cli):
    first = cli.run(*CMD, "budget.max_calls=200")
    assert first.returncode == 4, first.stderr  # stopped by the budget
    stopped = cli.results()[-1]
    assert stopped["exit_reason"].startswith("budget")

    again = cli.run(*CMD)  # the budget is not part of the run key: the same run, continued
    assert again.returncode == 0, again.stderr
    assert f"continuing with iteration {stopped['proposal_rounds'] + 1}" in again.stderr
    res = cli.results()[-1]
    assert not res["exit_reason"].startswith("budget")
    assert res["iterations_run"] > stopped["iterations_run"] and res["proposal_rounds"] == res["iterations_run"] - 1
    assert res["runs"] == stopped["runs"] + [res["runs"][-1]]
    rows = cli.sql("select iteration, count(*) n from candidates where role = 'candidate' "
                   "group by 1 having n > 3")
    assert rows == []  # no iteration's candidates were evaluated twice


def test_run_key_ignores_concurrency():
    skill = load_skill(EXAMPLE)
    cases = load_trigger_cases(EXAMPLE / "evals" / "trigger_eval.json")
    base = {"trigger": {"runs": 3, "concurrency": 8}, "optimize": {"candidates": 3}}
    slow = {"trigger": {"runs": 3, "concurrency": 2}, "optimize": {"candidates": 3}}
    more = {"trigger": {"runs": 5, "concurrency": 8}, "optimize": {"candidates": 3}}
    k = [run_key(OmegaConf.create(c), skill, cases) for c in (base, slow, more)]
    assert k[0] == k[1] != k[2]


def test_paired_comparison_leaves_out_insufficient_queries():
    def o(i: int, passed: bool, insufficient: bool = False) -> QueryOutcome:
        return QueryOutcome(f"q{i}", True, 3 if passed else 0, 0 if insufficient else 3,
                            passed, insufficient)

    # The incumbent was measured during an outage: its errors are not losses.
    incumbent = [o(i, False, insufficient=True) for i in range(4)] + [o(4, True)]
    candidate = [o(i, True) for i in range(5)]
    cmp = compare(candidate, incumbent, alpha=0.1)
    assert (cmp.wins, cmp.losses, cmp.replace) == (0, 0, False)
    assert QueryOutcome.from_dict(incumbent[0].to_dict()) == incumbent[0]
    assert QueryOutcome.from_dict({k: v for k, v in candidate[0].to_dict().items()
                                   if k != "insufficient"}) == candidate[0]  # old state JSON


def test_mistyped_numbers_exit_2_with_one_line(cli):
    for args, key in ((("optimize.candidates=abc",), "optimize.candidates"),
                      (("budget.max_calls=lots",), "budget.max_calls")):
        out = cli.run("+experiment=trigger_opt", *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and key in lines[0], out.stderr
