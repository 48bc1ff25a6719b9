"""`skilleval` end to end as a real subprocess: trigger_eval, the store, sql, reruns, sweeps."""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from skilleval.skills import load_skill
from skilleval.store.catalog import Store
from spine_helpers import CSV_DESCRIPTION, EXAMPLES, SMALL_CASES, write_cases, write_skill

BASE = ("+experiment=trigger_eval", "progress=false", "trigger.runs=2")


@pytest.fixture(scope="module")
def e2e(tmp_path_factory: pytest.TempPathFactory, make_skilleval_cli):  # noqa: ANN001, ANN201
    """The bundled example evaluated twice with the same command, into one private store."""
    cli = make_skilleval_cli(tmp_path_factory.mktemp("e2e"))
    first = cli.run(*BASE, check=0)
    [first_json] = cli.results()
    second = cli.run(*BASE, check=0)
    second_json = next(p for p in cli.results() if p != first_json)
    return cli, first, json.loads(first_json.read_text()), second, json.loads(second_json.read_text())


def sql(cli, query: str, fmt: str = "json"):  # noqa: ANN001, ANN201
    r = cli.run("sql", query, "--format", fmt, check=0)
    return json.loads(r.stdout) if fmt == "json" else r.stdout


def test_console_shows_per_query_rates_and_metrics_with_intervals(e2e) -> None:  # noqa: ANN001
    cli, first, data, _, _ = e2e
    out = first.stdout
    assert "changelog-writer: per-query trigger rates" in out
    # results.json's "runs" are the valid runs a rate is over; the console's column counts
    # every attempt, and was headed "runs" too
    header = next(ln for ln in out.splitlines() if "verdict" in ln and "expect" in ln)
    assert "attempts" in header and " runs " not in header
    short = [r["query"] for r in data["results"] if len(r["query"]) < 40]
    assert short, "expected some short queries in the example set"
    for q in short:
        assert q in out
    for r in data["results"]:  # the rate column: triggers/valid runs
        assert f"{r['triggers']}/{r['valid_runs']}" in out
    assert "metrics (95% Wilson intervals)" in out
    interval = r"(\d+% \[\d+%–\d+%\]|n/a)"
    assert re.search(rf"queries\s*│\s*{interval}\s*│\s*{interval}\s*│\s*{interval}\s*│\s*{interval}", out), out
    assert re.search(rf"runs\s*│\s*{interval}\s*│\s*{interval}\s*│\s*{interval}\s*│\s*{interval}", out), out
    made = data["calls"]["made"]
    assert f"backend calls: {made} new, 0 cached" in out
    assert "Traceback" not in first.stderr


def test_results_json_has_skill_creator_shape(e2e) -> None:  # noqa: ANN001
    _, _, data, _, _ = e2e
    assert list(data)[:4] == ["skill_name", "description", "results", "summary"]
    assert data["skill_name"] == "changelog-writer"
    assert data["description"] == load_skill(EXAMPLES / "changelog-writer").description
    cases = json.loads((EXAMPLES / "changelog-writer" / "evals" / "trigger_eval.json").read_text())
    assert [r["query"] for r in data["results"]] == [c["query"] for c in cases]
    for r, c in zip(data["results"], cases):
        assert list(r)[:6] == ["query", "should_trigger", "trigger_rate", "triggers", "runs", "pass"]
        assert r["should_trigger"] == c["should_trigger"]
        assert 1 <= r["runs"] <= 2
        assert r["trigger_rate"] == pytest.approx(r["triggers"] / r["valid_runs"], abs=1e-4)
        assert r["pass"] == (None if r["verdict"] == "insufficient" else r["verdict"] == "pass")
        if r["pass"]:
            assert (r["trigger_rate"] >= 0.5) == r["should_trigger"]
    s = data["summary"]
    assert s["total"] == 20 and s["passed"] + s["failed"] + s["insufficient"] == 20
    assert s["passed"] == sum(r["pass"] is True for r in data["results"])
    m = data["metrics"]
    for over in ("queries", "runs"):
        for name in ("precision", "recall", "accuracy", "f1"):
            e = m[over][name]
            assert 0.0 <= e["low"] <= e["high"] <= 1.0
            if e["value"] is not None:
                assert e["low"] <= e["value"] <= e["high"]
    assert m["trials"] == sum(r["runs"] for r in data["results"]) == data["calls"]["made"]
    assert m["errors"] == 0 and m["timeouts"] == 0


def test_sql_counts_the_trials_made(e2e) -> None:  # noqa: ANN001
    cli, _, data, _, _ = e2e
    [row] = sql(cli, "select count(*) as n from trials")
    assert row["n"] == data["calls"]["made"] == data["metrics"]["trials"]
    per_query = {r["query"]: r["n"] for r in sql(cli, "select query, count(*) as n from trials group by 1")}
    assert per_query == {r["query"]: r["runs"] for r in data["results"]}
    # the same through the library, straight from the Parquet parts
    assert Store(cli.store).query("select count(*) as n from trials").to_pylist() == [{"n": row["n"]}]


def test_rerun_makes_zero_backend_calls(e2e) -> None:  # noqa: ANN001
    cli, _, first, second_proc, second = e2e
    made = first["calls"]["made"]
    assert f"backend calls: 0 new, {made} cached" in second_proc.stdout
    assert second["calls"] == {"made": 0, "cached": made}
    assert [r["verdict"] for r in second["results"]] == [r["verdict"] for r in first["results"]]
    # by ts: run ids sort by their start only to the second (two runs in one second order by
    # their random suffix; seen on a fresh clone)
    runs = sql(cli, "select run_id, calls_made, calls_cached, status from runs order by ts")
    assert [(r["run_id"], r["calls_made"], r["calls_cached"], r["status"]) for r in runs] == [
        (first["run_id"], made, 0, "done"), (second["run_id"], 0, made, "done")]
    [row] = sql(cli, f"select count(*) as n from trials where run_id = '{second['run_id']}'")
    assert row["n"] == 0
    [row] = sql(cli, "select count(*) as n, count(distinct key) as k from trials")
    assert row == {"n": made, "k": made}
    # per-query verdicts of both runs are in the queries view
    [row] = sql(cli, "select count(*) as n, count(distinct run_id) as r from queries")
    assert row == {"n": 40, "r": 2}


def test_sql_formats(e2e) -> None:  # noqa: ANN001
    cli, _, data, _, _ = e2e
    text = sql(cli, "select outcome, count(*) as n from trials group by 1 order by 1", "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["outcome", "n"]
    assert sum(int(n) for _, n in rows[1:]) == data["calls"]["made"]
    assert {o for o, _ in rows[1:]} <= {"triggered", "not_triggered"}
    table = sql(cli, "select count(*) as n from trials", "table")
    assert "n" in table and str(data["calls"]["made"]) in table
    r = cli.run("sql", "select * from no_such_view", check=2)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "SQL error" in lines[0] and "trials" in lines[0]


def test_all_errors_exit_3_and_still_write_results(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    skill = write_skill(tmp_path, "csv-tidy", CSV_DESCRIPTION)
    cases = write_cases(tmp_path / "cases.json", SMALL_CASES)
    r = skilleval_cli.run(*BASE, f"skill={skill}", f"cases={cases}", "backend.error_rate=1.0", check=3)
    errs = [ln for ln in r.stderr.splitlines() if ln.startswith("skilleval:")]
    assert len(errs) == 1 and "no valid trials" in errs[0]
    assert "Traceback" not in r.stderr and "Error executing job" not in r.stderr
    [path] = skilleval_cli.results()
    data = json.loads(path.read_text())
    assert data["summary"] == {"total": 6, "passed": 0, "failed": 0, "insufficient": 6}
    assert data["metrics"]["errors"] == data["metrics"]["trials"] == 12
    # no valid run: no verdict, neither passed nor failed
    assert all(r["trigger_rate"] is None and r["pass"] is None and r["insufficient"]
               for r in data["results"])
    status = Store(skilleval_cli.store).query("select status from runs").to_pylist()
    assert status == [{"status": "harness_error"}]
    outcomes = Store(skilleval_cli.store).query("select distinct outcome from trials").to_pylist()
    assert outcomes == [{"outcome": "error"}]


def test_multirun_sweep_shares_one_store_and_pays_once(tmp_path: Path, make_skilleval_cli) -> None:  # noqa: ANN001
    skill = write_skill(tmp_path, "csv-tidy", CSV_DESCRIPTION)
    cases = write_cases(tmp_path / "cases.json", SMALL_CASES)
    common = ("progress=false", "trigger.runs=3", "trigger.policy=fixed", f"skill={skill}", f"cases={cases}")

    single = make_skilleval_cli(tmp_path / "single")
    single.run("+experiment=trigger_eval", *common, check=0)
    one_job = Store(single.store).query("select calls_made from runs").to_pylist()[0]["calls_made"]
    assert one_job == 18

    sweep = make_skilleval_cli(tmp_path / "sweep")
    r = sweep.run("-m", "+experiment=trigger_eval", "trigger.threshold=0.3,0.5,0.7", *common, check=0)
    assert "Traceback" not in r.stderr
    store = Store(sweep.store)
    runs = store.query("select run_id, sweep_id, job_num, calls_made, calls_cached, status "
                       "from runs order by job_num").to_pylist()
    assert [x["job_num"] for x in runs] == [0, 1, 2]
    assert len({x["sweep_id"] for x in runs}) == 1 and runs[0]["sweep_id"]
    assert len({x["run_id"] for x in runs}) == 3
    assert all(x["status"] == "done" for x in runs)
    assert sum(x["calls_made"] for x in runs) == one_job
    assert sum(x["calls_made"] + x["calls_cached"] for x in runs) == 3 * one_job
    # every trial row says which sweep and job made it; no trial was stored twice
    [t] = store.query("select count(*) n, count(distinct key) k, count(distinct sweep_id) s, "
                      "min(job_num) j from trials").to_pylist()
    assert t == {"n": one_job, "k": one_job, "s": 1, "j": 0}
    q = store.query("select job_num, threshold, count(*) n from queries group by all order by 1").to_pylist()
    assert q == [{"job_num": 0, "threshold": 0.3, "n": 6}, {"job_num": 1, "threshold": 0.5, "n": 6},
                 {"job_num": 2, "threshold": 0.7, "n": 6}]
    results = sweep.results()
    assert len(results) == 3
    thresholds = sorted(json.loads(p.read_text())["settings"]["threshold"] for p in results)
    assert thresholds == [0.3, 0.5, 0.7]


def test_help_lists_experiments_and_plugin_options(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("--help", check=0)
    groups = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(\w+): (.+)$", line)
        if m:
            groups[m.group(1)] = {x.strip() for x in m.group(2).split(",")}
    assert {"trigger_eval", "trigger_opt"} <= groups["experiment"]
    assert {"stub", "claude_cli", "anthropic_api"} <= groups["backend"]
    assert {"console", "json"} <= groups["reporter"]
    assert "stratified" in groups["splitter"]
    assert "Exit codes" in r.stdout and "$SKILLEVAL_STORE" in r.stdout


def test_plugins_lists_kind_name_distribution_version(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("plugins", "--format", "json", check=0)
    regs = {(x["kind"], x["name"]): x for x in json.loads(r.stdout)}
    for key in [("backend", "stub"), ("backend", "claude_cli"), ("reporter", "console"),
                ("reporter", "json"), ("experiment", "trigger_eval")]:
        assert regs[key]["distribution"] == "skilleval"
        assert re.match(r"\d+\.\d+", regs[key]["version"]), regs[key]
    table = skilleval_cli.run("plugins", check=0).stdout
    header = table.splitlines()[1]
    for col in ("kind", "name", "distribution", "version"):
        assert col in header
    assert re.search(r"backend\s*│\s*stub\s*│\s*skilleval\s*│", table)
