"""A sweep-wide error (the same bad setting in every job of a multirun) is printed once, with
the number of jobs it happened in; distinct errors each keep their line; exit codes follow
the sweep rules (the worst job's code)."""
from __future__ import annotations


def _errors(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("skilleval:")]


def test_the_same_error_in_every_job_is_refused_once_before_any_job(skilleval_cli) -> None:
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "skill=${example:csv-tidy}",
                          "trigger.runs=0", "trigger.threshold=0.3,0.5,0.7", "progress=false",
                          check=2)
    assert _errors(r.stderr) == ["skilleval: error: trigger.runs must be >= 1, got 0 (all 3 sweep "
                                 "jobs); no job was started"]
    assert "Traceback" not in r.stderr


def test_a_bad_cell_is_refused_before_the_good_cells_run_and_pay(skilleval_cli) -> None:
    """Each job's config was checked only when its job started: the good cell ran (and, on a
    real backend, paid) before the typo in the other was refused."""
    # jobs: #0 runs=0/0.5, #1 runs=0/2, #2 runs=1/0.5 (fine), #3 runs=1/2 (threshold)
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "skill=${example:csv-tidy}",
                          "trigger.runs=0,1", "trigger.threshold=0.5,2", "progress=false",
                          check=2)
    assert _errors(r.stderr) == [
        "skilleval: error: trigger.runs must be >= 1, got 0 (sweep jobs #0, #1 of 4); "
        "trigger.threshold must be in (0, 1], got 2.0 (sweep job #3 of 4: trigger.runs=1 "
        "trigger.threshold=2); no job was started"]
    assert not list(skilleval_cli.outputs.rglob("results.json"))  # job #2 did not run
    assert not (skilleval_cli.store / "trials").exists()


def test_a_single_run_error_is_unchanged(skilleval_cli) -> None:
    r = skilleval_cli.run("+experiment=trigger_eval", "skill=${example:csv-tidy}", "trigger.runs=0",
                          check=2)
    assert _errors(r.stderr) == ["skilleval: error: trigger.runs must be >= 1, got 0"]


def test_a_job_refused_when_it_starts_has_its_row_in_the_sweep_table(skilleval_cli) -> None:
    """The table listed only the jobs that started: "1 jobs", an empty "varied" column, and
    the swept value shown as "same in every job". A check that needs the store is made when
    its job starts (a named gate.baseline run), and that refusal still has its row."""
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "skill=${example:csv-tidy}",
                          "gate.baseline=no-such-run,latest", "gate.max_regression=0.1", "trigger.runs=1",
                          "progress=false",
                          check=2)
    table = " ".join(r.stdout[r.stdout.index("sweep "):].split())
    assert ": 2 jobs" in table, table
    assert "refused (exit 2)" in table and "gate.baseline=no-such-run" in table, table


def test_a_bad_backend_parameter_in_one_cell_is_refused_before_any_job(skilleval_cli) -> None:
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "skill=${example:csv-tidy}",
                          "backend.error_rate=0.1,1.5", "gate.min_recall=0.5,2", "trigger.runs=1",
                          "progress=false", check=2)
    [line] = _errors(r.stderr)
    assert "backend.error_rate" in line and "gate.min_recall" in line and "no job was started" in line
    assert not (skilleval_cli.store / "trials").exists()


def test_sweep_table_says_not_checked_for_a_budget_stopped_job(skilleval_cli) -> None:
    """A job stopped by the budget printed "gates not checked", and its row in the sweep table
    said "passed" (the table counted failed gates only)."""
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "skill=${example:csv-tidy}", "trigger.runs=1,3",
                          "budget.max_calls=25", "gate.min_recall=0.5", "progress=false", check=4)
    rows = {ln.split("│")[1].strip(): ln for ln in r.stdout[r.stdout.index("sweep "):].splitlines()
            if ln.startswith("│")}
    assert "budget_stopped" in rows["1"] and "not checked" in rows["1"] and "passed" not in rows["1"], rows
