"""A sweep-wide error (the same bad setting in every job of a multirun) is printed once, with
the number of jobs it happened in; distinct errors each keep their line; exit codes follow
the sweep rules (the worst job's code)."""
from __future__ import annotations


def _errors(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("skilleval:")]


def test_the_same_error_in_every_job_is_printed_once_with_a_count(skilleval_cli) -> None:
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "skill=${example:csv-tidy}",
                          "trigger.runs=0", "trigger.threshold=0.3,0.5,0.7", "progress=false",
                          check=2)
    assert _errors(r.stderr) == ["skilleval: error: trigger.runs must be >= 1, got 0",
                                 "skilleval: the error above occurred in all 3 jobs (printed once)"]
    assert "Traceback" not in r.stderr


def test_distinct_errors_keep_their_lines_and_repeats_name_their_jobs(skilleval_cli) -> None:
    # jobs: #0 runs=0/0.5, #1 runs=0/2, #2 runs=1/0.5 (runs), #3 runs=1/2 (threshold)
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "skill=${example:csv-tidy}",
                          "trigger.runs=0,1", "trigger.threshold=0.5,2", "progress=false",
                          check=2)
    assert _errors(r.stderr) == [
        "skilleval: error: trigger.runs must be >= 1, got 0",
        "skilleval: error: trigger.threshold must be in (0, 1], got 2.0",
        "skilleval: the error above starting 'trigger.runs must be >= 1, got 0' occurred in "
        "2 of 4 jobs: #0, #1 (printed once)"]
    assert len(list(skilleval_cli.outputs.rglob("results.json"))) == 1  # job #2 ran


def test_a_single_run_error_is_unchanged(skilleval_cli) -> None:
    r = skilleval_cli.run("+experiment=trigger_eval", "skill=${example:csv-tidy}", "trigger.runs=0",
                          check=2)
    assert _errors(r.stderr) == ["skilleval: error: trigger.runs must be >= 1, got 0"]


def test_a_refused_job_has_its_row_in_the_sweep_table(skilleval_cli) -> None:
    """The table listed only the jobs that started: "1 jobs", an empty "varied" column, and
    the swept trigger.runs=3 shown as "same in every job"."""
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "skill=${example:csv-tidy}",
                          "trigger.runs=3,0", "progress=false", check=2)
    table = " ".join(r.stdout[r.stdout.index("sweep "):].split())
    assert ": 2 jobs" in table, table
    assert "same in every job" not in table or "trigger.runs" not in table.split("same in every job")[1], table
    assert "refused (exit 2)" in table and "trigger.runs=0" in table and "trigger.runs=3" in table, table


def test_sweep_table_says_not_checked_for_a_budget_stopped_job(skilleval_cli) -> None:
    """A job stopped by the budget printed "gates not checked", and its row in the sweep table
    said "passed" (the table counted failed gates only)."""
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "skill=${example:csv-tidy}", "trigger.runs=1,3",
                          "budget.max_calls=25", "gate.min_recall=0.5", "progress=false", check=4)
    rows = {ln.split("│")[1].strip(): ln for ln in r.stdout[r.stdout.index("sweep "):].splitlines()
            if ln.startswith("│")}
    assert "budget_stopped" in rows["1"] and "not checked" in rows["1"] and "passed" not in rows["1"], rows
