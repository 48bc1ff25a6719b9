"""Hydra launchers from the extras: `-m hydra/launcher=joblib` runs sweep cells in parallel
worker processes, all into one store, and the CLI still exits with the worst cell's code."""
from __future__ import annotations

import json

import hydra_plugins.hydra_joblib_launcher  # noqa: F401 - missing extra: fail, never skip

SWEEP = ["-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "+experiment=trigger_eval",
         "progress=false"]


def _runs(cli) -> list[dict]:
    proc = cli.run("sql", "select sweep_id, job_num, status from runs order by job_num",
                   "--format", "json", check=0)
    return json.loads(proc.stdout)


def test_joblib_sweep_runs_three_jobs_into_one_store(skilleval_cli):
    proc = skilleval_cli.run(*SWEEP, "trigger.threshold=0.3,0.5,0.7", timeout=240, check=0)
    assert "Joblib.Parallel" in proc.stderr + proc.stdout  # the joblib launcher ran them
    runs = _runs(skilleval_cli)
    assert [r["job_num"] for r in runs] == [0, 1, 2]
    assert {r["status"] for r in runs} == {"done"} and len({r["sweep_id"] for r in runs}) == 1
    assert len(skilleval_cli.results()) == 3
    # the sweep's table has every worker's job (it was empty: rows stayed in the workers),
    # and the workers' composing of the config printed no UserWarning
    table = proc.stdout[proc.stdout.index(f"sweep {runs[0]['sweep_id']}: 3 jobs"):]
    for t in ("trigger.threshold=0.3", "trigger.threshold=0.5", "trigger.threshold=0.7"):
        assert t in table
    assert "Warning" not in proc.stderr, proc.stderr


def test_joblib_sweep_exits_with_the_worst_cells_code(skilleval_cli):
    # the code of a job that ran in a joblib worker process reaches the CLI
    proc = skilleval_cli.run(*SWEEP, "trigger.threshold=0.5,7", timeout=240)
    assert proc.returncode == 2, proc.stderr
    assert "trigger.threshold must be in (0, 1], got 7.0" in proc.stderr


def test_submitit_local_sweep_runs_its_jobs_into_one_store_and_reports_their_codes(skilleval_cli):
    """submitit's local mode (the SLURM launcher's stand-in): each cell is a separate job
    process; the good one lands in the store, the bad one is refused before it records a run
    (config checks come before the store is written), and its exit code reaches the CLI."""
    import hydra_plugins.hydra_submitit_launcher  # noqa: F401 - missing extra: fail, never skip

    # a named baseline run is looked up when its job starts (that needs the store); a value
    # out of range would be refused before any job (sweep_precheck)
    proc = skilleval_cli.run("-m", "hydra/launcher=submitit_local", "+experiment=trigger_eval",
                             "progress=false", "trigger.runs=1", "trigger.policy=fixed",
                             "gate.baseline=no-such-run,latest", "gate.max_regression=0.1", timeout=240)
    assert proc.returncode == 2, proc.stderr
    runs = _runs(skilleval_cli)
    assert [(r["job_num"], r["status"]) for r in runs] == [(1, "done")]


def test_a_sweep_wide_error_in_worker_processes_is_printed_once_by_the_cli(skilleval_cli):
    """Jobs in joblib workers hand their error line to the CLI (a worker's stderr may be a log
    file elsewhere); the same line from every job is printed once, with the count."""
    # an error each job finds when it starts (a baseline run looked up in the store); a bad
    # value shared by every job is refused before the sweep starts (sweep_precheck)
    proc = skilleval_cli.run(*SWEEP, "gate.baseline=no-such-run", "gate.max_regression=0.1",
                             "trigger.threshold=0.3,0.5,0.7", timeout=240)
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("skilleval:")]
    assert len(lines) == 2 and lines[0].startswith("skilleval: error: gate.baseline=no-such-run: no run"), lines
    assert lines[1] == "skilleval: the error above occurred in all 3 jobs (printed once)", proc.stderr
