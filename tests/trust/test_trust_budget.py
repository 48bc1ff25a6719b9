"""Issue 8 item 11: budgets work on every experiment without `+`, a stop is never silent and
exits 4, and calls in flight are booked against the cap so spending never passes it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilleval.budget import Budget
from skilleval.sim.process import SimProcess
from skilleval.store.catalog import Store
from trust_helpers import EXAMPLES

EXPERIMENTS = ["trigger_eval", "trigger_opt", "functional_eval", "compare"]


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_budget_keys_need_no_plus_on_any_experiment(skilleval_cli, experiment: str) -> None:  # noqa: ANN001
    r = skilleval_cli.run(f"+experiment={experiment}", "budget.max_calls=7", "budget.max_usd=0.5",
                          "--cfg", "job", check=0)
    assert "max_calls: 7" in r.stdout and "max_usd: 0.5" in r.stdout


def _status(cli) -> list[dict]:  # noqa: ANN001
    return Store(cli.store).query("select status, summary_json from runs order by ts").to_pylist()


def test_trigger_eval_budget_stop_exits_4_and_says_so(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", "progress=false", "budget.max_calls=5",
                          "trigger.policy=fixed")
    assert r.returncode == 4, r.stderr
    assert "budget stop: budget.max_calls=5" in r.stderr and "Traceback" not in r.stderr
    [path] = skilleval_cli.results()
    res = json.loads(path.read_text())
    assert res["partial"] is True and res["budget_stop"].startswith("budget.max_calls=5")
    assert res["calls"]["made"] == 5
    assert _status(skilleval_cli)[-1]["status"] == "budget_stopped"


def test_a_budget_stopped_trigger_eval_measures_every_query_first_and_says_partial(skilleval_cli) -> None:  # noqa: ANN001
    """A query's three runs were queued together, so max_calls=25 gave the first 8 queries
    (all should-trigger) 3 runs and 11 none, and the rates were labelled "unbiased (fixed runs
    per query)" with nothing on stdout saying partial."""
    r = skilleval_cli.run("+experiment=trigger_eval", "progress=false", "budget.max_calls=25",
                          "trigger.policy=fixed", "trigger.runs=3")
    assert r.returncode == 4, r.stderr
    res = json.loads(skilleval_cli.results()[-1].read_text())
    runs = [q["attempts"] for q in res["results"]]
    assert min(runs) == 1 and max(runs) == 2 and sum(runs) == 25, runs  # a first run for all 20 before a second
    assert res["rates"].startswith("partial (a budget stop left 20 of 20 queries short of the 3 planned runs)")
    assert res["metrics"]["rates"] == res["rates"]
    assert "PARTIAL: the budget stopped the run; 20 of 20 queries" in " ".join(r.stdout.split())


def test_functional_eval_budget_stop_is_not_silent(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=functional_eval", "progress=false", "budget.max_calls=1")
    assert r.returncode == 4, r.stdout + r.stderr
    assert "budget stop: budget.max_calls=1" in r.stderr and "Traceback" not in r.stderr
    assert _status(skilleval_cli)[-1]["status"] == "budget_stopped"


def test_functional_eval_budget_stop_reports_what_ran_as_partial(skilleval_cli) -> None:
    """The stop message promises "what was measured before it is stored and reported as
    partial": the executions that ran are graded (free checks) and written to the workspace
    and benchmark.json, marked partial; nothing that was not run appears as a result."""
    r = skilleval_cli.run("+experiment=functional_eval", "progress=false", "budget.max_calls=4",
                          "functional.only=[1]", "functional.bootstrap=50", "functional.concurrency=1")
    assert r.returncode == 4, r.stdout + r.stderr
    assert "budget stop: budget.max_calls=4" in r.stderr and "Traceback" not in r.stderr
    assert "PARTIAL" in r.stdout + r.stderr and "with_skill" in r.stdout
    # said on stdout beside the numbers, where ungraded expectations show as judge errors
    assert "PARTIAL: budget stop: budget.max_calls=4" in " ".join(r.stdout.split()), r.stdout
    [bench_path] = skilleval_cli.outputs.rglob("iteration-1/benchmark.json")
    bench = json.loads(bench_path.read_text())
    assert bench["partial"]["reason"].startswith("budget stop: budget.max_calls=4")
    assert bench["partial"]["executions_not_run"] == 2 and bench["notes"][0].startswith("PARTIAL")
    [row] = Store(skilleval_cli.store).query("select count(*) n from executions").to_pylist()
    assert row["n"] == 4 == len(bench["runs"])  # every paid execution is reported, none invented
    grades = [json.loads(g.read_text()) for g in bench_path.parent.rglob("grading.json")]
    assert len(grades) == 4
    verdicts = [e["passed"] for g in grades for e in g["expectations"]]
    assert True in verdicts  # the typed checks (no call) were graded
    # plain-English expectations the budget left ungraded are judge errors, never a fail
    assert all(g["summary"]["failed"] + g["summary"]["passed"] == g["summary"]["total"] for g in grades)
    assert all("budget stop" in e["evidence"] + str(e.get("error")) for g in grades
               for e in g["expectations"] if e["passed"] is None)
    assert sum(g["summary"]["judge_errors"] for g in grades) > 0
    assert _status(skilleval_cli)[-1]["status"] == "budget_stopped"


def test_judge_and_analyzer_calls_are_booked_against_the_budget(skilleval_cli) -> None:
    """One eval, one run per arm on the stub: 2 executions + 2 grader calls use the 4 calls
    allowed, so the benchmark analyzer's call is refused; it used to be made off the books
    (exit 0 with 5 calls made under budget.max_calls=4)."""
    r = skilleval_cli.run("+experiment=functional_eval", "progress=false", "budget.max_calls=4",
                          "functional.only=[1]", "functional.runs=1", "functional.bootstrap=50")
    assert r.returncode == 4, r.stdout + r.stderr
    assert "budget stop: budget.max_calls=4" in r.stderr
    [bench_path] = skilleval_cli.outputs.rglob("iteration-1/benchmark.json")
    notes = json.loads(bench_path.read_text())["notes"]
    assert any(n.startswith("analyzer notes unavailable: BudgetExhausted") for n in notes), notes
    summary = json.loads(_status(skilleval_cli)[-1]["summary_json"])
    assert summary["calls_made"] == 4


def test_judge_costs_count_in_the_run_cost(skilleval_cli, sim: SimProcess) -> None:
    """The llm_grader's and the analyzer's calls are paid for: the run's cost (the Runs page,
    and what budget.max_usd is checked against) includes them, not only the executions'."""
    r = skilleval_cli.run("+experiment=functional_eval", "progress=false", "backend=anthropic_api",
                          f"backend.base_url={sim.url}", "backend.model=sim-1", "functional.only=[1]",
                          "functional.runs=1", "functional.bootstrap=50", "budget.max_usd=100",
                          env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    assert r.returncode == 0, r.stdout + r.stderr
    [row] = Store(skilleval_cli.store).query("select sum(cost_usd) usd from executions").to_pylist()
    summary = json.loads(_status(skilleval_cli)[-1]["summary_json"])
    assert summary["judge_calls"] >= 2
    assert summary["cost_usd"] > row["usd"] > 0, (summary["cost_usd"], row["usd"])


def test_spending_never_passes_max_usd_with_calls_in_flight(skilleval_cli, sim: SimProcess) -> None:  # noqa: ANN001
    """Eight calls in flight against serve-sim (priced like Haiku 4.5): the old check let all
    of them start once the money spent was still under the cap."""
    sim.configure(latency_ms=50.0)
    cap = 0.01
    r = skilleval_cli.run("+experiment=trigger_eval", "progress=false", "backend=anthropic_api",
                          f"backend.base_url={sim.url}", "backend.model=sim-1", "trigger.self_check=false",
                          "trigger.policy=fixed", "trigger.concurrency=8", f"budget.max_usd={cap}",
                          f"skill={EXAMPLES / 'csv-tidy'}", env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    assert r.returncode == 4, r.stderr
    assert "budget stop: budget.max_usd=0.01" in r.stderr
    [row] = Store(skilleval_cli.store).query("select sum(cost_usd) usd, count(*) n from trials").to_pylist()
    costs = [x["cost_usd"] for x in Store(skilleval_cli.store).query(
        "select cost_usd, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens from trials order by ts").to_pylist()]
    print(costs)
    assert 0 < row["usd"] <= cap, row
    assert row["n"] >= 2
    summary = json.loads(_status(skilleval_cli)[-1]["summary_json"])
    assert summary["budget_stop"].startswith("budget.max_usd")


def _spend_concurrently(cap: float, *, first_stop_ends_all: bool) -> Budget:
    """8 concurrent callers, each call costing $0.001, against `cap`: each stops at its own
    BudgetExhausted, or (as in the trial runner) the first stop ends every caller."""
    import asyncio

    from skilleval.errors import BudgetExhausted

    budget = Budget(max_usd=cap)
    stopped: list[bool] = []

    async def caller() -> None:
        while not (first_stop_ends_all and stopped):
            try:
                await budget.areserve()
            except BudgetExhausted:
                stopped.append(True)
                return
            await asyncio.sleep(0.01)
            budget.charge_usd(0.001)

    async def main() -> None:
        await asyncio.gather(*(caller() for _ in range(8)))

    asyncio.run(main())
    return budget


def test_calls_in_flight_are_booked_against_max_usd() -> None:
    """The mechanism on its own: 8 concurrent callers, each call costs $0.001, cap $0.0045.
    The old check (money spent so far < cap) let every caller start."""
    budget = _spend_concurrently(0.0045, first_stop_ends_all=False)
    assert budget.usd <= 0.0045 and budget.calls >= 2
    assert budget.stopped and budget.in_flight == 0


def test_a_money_cap_is_spent_up_to_its_last_call_not_stopped_at_half() -> None:
    """With calls in flight booked at twice the dearest call, a cap of $0.01 stopped at
    $0.0024 spent (7 in flight, next ~$0.001): a call that does not fit now waits for the
    calls in flight to settle at their real cost, and stops only when none is left."""
    from skilleval.budget import HEADROOM

    budget = _spend_concurrently(0.01, first_stop_ends_all=True)
    assert 0.01 - HEADROOM * 0.001 <= budget.usd <= 0.01, budget.usd
    assert budget.stopped and budget.in_flight == 0


def test_a_free_error_does_not_make_the_next_calls_look_free() -> None:
    from skilleval.budget import HEADROOM, Budget
    from skilleval.errors import BudgetExhausted

    budget = Budget(max_usd=0.01)
    budget.reserve()
    budget.charge_usd(0.0, priced=False)  # the first call failed before an answer
    assert budget.per_call_usd is None  # still unknown, so the next call runs alone
    budget.reserve()
    budget.charge_usd(0.002)
    assert budget.per_call_usd == 0.002
    booked = 0
    with pytest.raises(BudgetExhausted):
        while True:
            budget.reserve()
            booked += 1
    assert budget.usd + booked * HEADROOM * 0.002 <= 0.01
    assert budget.stopped


def test_trigger_opt_plan_counts_the_self_check(skilleval_cli, sim: SimProcess) -> None:  # noqa: ANN001
    """The plan said "total ≤61 calls", and a budget of 61 then stopped the run: the six
    self-check calls were in no figure (trigger_eval's plan says them)."""
    r = skilleval_cli.run("+experiment=trigger_opt", "backend=anthropic_api", f"backend.base_url={sim.url}",
                          "backend.model=sim-1", "optimize.max_iterations=1", "progress=false",
                          env={"ANTHROPIC_API_KEY": "sk-ant-test"}, check=0)
    [plan] = [ln for ln in r.stderr.splitlines() if ln.startswith("plan:")]
    assert "calls + ≤6 self-check" in plan, plan


def test_a_cheap_first_call_does_not_let_dearer_ones_pass_the_cap() -> None:
    """The mechanism: a call booked at twice the dearest so far ($0.0048) let a $0.0174 call
    through; with the backend's bound for a call of that size ($0.03) booked instead, every
    call that starts fits."""
    from skilleval.errors import BudgetExhausted

    budget = Budget(max_usd=0.05)
    budget.reserve()
    budget.charge_usd(0.0048, bound_usd=0.03)
    spent = [0.0048]
    with pytest.raises(BudgetExhausted):
        while True:
            budget.reserve()
            budget.charge_usd(0.0174, bound_usd=0.03)
            spent.append(0.0174)
    assert sum(spent) <= 0.05 and len(spent) == 2 and "up to $0.0348" in budget.stopped


def test_claude_cli_spending_never_passes_max_usd(skilleval_cli, sim: SimProcess, claude_bin: str) -> None:  # noqa: ANN001
    """The real CLI through serve-sim: a trial stopped at its decision costs $0.005 (our price
    table, mostly cache reads), one that answers on a cold cache $0.077 (the CLI's own total,
    which prices sim-1 by its own table). Booked at twice the dearest call so far, the
    self-check's first negative control started with $0.015 spent and passed a $0.05 cap
    ($0.0665 seen). A first run that pays for the positive controls only warms the cache for
    them, so in the second (its own store) they are cheap and the negative ones are not."""
    common = ("+experiment=trigger_eval", "progress=false", "backend=claude_cli",
              f"backend.executable={claude_bin}", f"backend.base_url={sim.url}", "backend.model=sim-1",
              "trigger.runs=1", f"skill={EXAMPLES / 'csv-tidy'}")
    skilleval_cli.run(*common, "budget.max_calls=3", check=4)  # the positive controls only
    cap = 0.05
    r = skilleval_cli.run(*common, f"budget.max_usd={cap}", f"store.root={skilleval_cli.store}-2")
    assert r.returncode == 4, r.stderr[-2000:]
    store = Store(Path(f"{skilleval_cli.store}-2"))
    costs = [x["cost_usd"] for t in ("controls", "trials") if t in store.tables()
             for x in store.query(f"select cost_usd from {t} order by ts").to_pylist()]
    assert costs and 0 < sum(costs) <= cap, costs
