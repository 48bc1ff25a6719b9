"""End to end: real `skilleval` subprocesses, real files, real DuckDB, on the stub and serve-sim."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from shared_helpers import install_plugin

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"
FAST = ("functional.bootstrap=200",)


@pytest.fixture
def cli(skilleval_cli):  # noqa: ANN001, ANN201 - the shared subprocess runner (tests/conftest.py)
    return skilleval_cli


def _bench(cli) -> dict:
    found = sorted(cli.outputs.rglob("iteration-*/benchmark.json"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads(found[-1].read_text())


def test_functional_eval_on_stub_end_to_end_and_resume(cli) -> None:
    p = cli.run("+experiment=functional_eval", *FAST, check=0, timeout=300)
    assert "delta" in p.stdout and "with_skill" in p.stdout and "without_skill" in p.stdout
    assert re.search(r"pass rate .*\[[+-]\d\.\d\d, [+-]\d\.\d\d\]", p.stdout)
    it = sorted(cli.outputs.rglob("iteration-1"))[-1]
    assert (it / "benchmark.md").is_file()
    run = it / "eval-dedupe-contacts" / "with_skill" / "run-1"
    assert (run / "outputs" / "contacts_clean.csv").is_file()
    grading = json.loads((run / "grading.json").read_text())
    assert {"expectations", "summary", "claims", "eval_feedback"} <= set(grading)
    assert json.loads((run / "timing.json").read_text())["total_tokens"] > 0
    assert json.loads((it / "eval-dedupe-contacts" / "eval_metadata.json").read_text())["eval_name"]
    b = _bench(cli)
    assert list(b["run_summary"])[:3] == ["with_skill", "without_skill", "delta"]
    assert b["runs"][0]["configuration"] and "pass_rate" in b["runs"][0]["result"]
    assert b["metadata"]["runs_per_configuration"] == 3 and b["notes"]
    again = cli.run("+experiment=functional_eval", *FAST, check=0, timeout=300)
    assert "executions: 0 run, 24 from the store" in again.stderr, p.stdout + p.stderr + again.stderr
    assert "grades: 0 graded" in again.stderr, p.stdout + p.stderr + again.stderr  # once seen: 96 regraded
    n = cli.run("sql", "select count(*) as n, count(distinct key) as k from executions", "--format", "json", check=0)
    row = json.loads(n.stdout)[0]
    assert row["n"] == row["k"] == 24


def test_old_skill_delta_sign_is_by_role(cli, tmp_path: Path) -> None:
    old = tmp_path / "snapshot" / "csv-tidy"
    shutil.copytree(CSV_TIDY, old)
    text = (old / "SKILL.md").read_text()
    body_start = text.index("# CSV Tidy")
    (old / "SKILL.md").write_text(text[:body_start] + "# CSV Tidy\n\nClean the file the user gives you.\n")
    cli.run("+experiment=functional_eval", *FAST, "functional.arms=[old_skill,with_skill]",
            f"functional.old_skill={old}", "functional.analyze=false", check=0, timeout=300)
    b = _bench(cli)
    s = b["run_summary"]
    assert list(s)[:2] == ["with_skill", "old_skill"]
    d = s["with_skill"]["pass_rate"]["mean"] - s["old_skill"]["pass_rate"]["mean"]
    assert s["delta"]["pass_rate"] == f"{d:+.2f}" and d > 0
    assert b["delta_stats"]["primary"] == "with_skill"


def test_arms_differing_in_tools_fail_clearly(cli) -> None:
    p = cli.run("+experiment=functional_eval", "+functional.arm_overrides.without_skill.tools=[read_file]")
    assert p.returncode == 2
    assert "arms differ in more than the skill" in p.stderr and "tools" in p.stderr
    assert "Traceback" not in p.stderr


def test_invalid_grader_json_is_a_judge_error_never_pass_or_fail(cli, tmp_path: Path) -> None:
    evals = tmp_path / "evals.json"
    evals.write_text(json.dumps({"skill_name": "csv-tidy", "evals": [{
        "id": 1, "name": "bad-judge", "prompt": json.loads((CSV_TIDY / "evals/evals.json").read_text())["evals"][0]["prompt"],
        "files": ["evals/files/contacts.csv"],
        "expectations": ["[[sim:invalid-json]] every email is lowercase",
                         {"type": "file_exists", "path": "outputs/contacts_clean.csv"}]}]}))
    cli.run("+experiment=functional_eval", *FAST, f"functional.evals={evals}", "functional.runs=1",
            "functional.analyze=false", check=0, timeout=300)
    rows = json.loads(cli.run("sql", "select judge, status, passed, judge_error, judge_calls from grades",
                              "--format", "json", check=0).stdout)
    llm = [r for r in rows if r["judge"] == "llm_grader"]
    assert llm and all(r["status"] == "judge_error" and r["passed"] is None for r in llm)
    assert all(r["judge_calls"] == 2 for r in llm)  # asked, re-asked, then recorded as an error
    assert {r["status"] for r in rows if r["judge"] == "file_exists"} == {"pass"}


def _workspace(root: Path) -> None:
    for cfg, passed in (("with_skill", True), ("without_skill", False)):
        for n in (1, 2):
            run = root / "iteration-1" / "eval-0-dedupe" / cfg / f"run-{n}"
            (run / "outputs").mkdir(parents=True)
            (run / "outputs" / "out.csv").write_text("a,b\n")
            (run / "grading.json").write_text(json.dumps({
                "expectations": [{"text": "no duplicate emails", "passed": passed, "evidence": "41 rows"}],
                "summary": {"passed": int(passed), "failed": int(not passed), "total": 1, "pass_rate": float(passed)}}))
            (run / "timing.json").write_text(json.dumps({"total_tokens": 1000, "total_duration_seconds": 4.2}))
    (root / "iteration-1" / "eval-0-dedupe" / "eval_metadata.json").write_text(
        json.dumps({"eval_id": 0, "eval_name": "dedupe", "prompt": "dedupe", "assertions": []}))
    flat = root / "iteration-2" / "eval-1" / "with_skill"
    (flat / "outputs").mkdir(parents=True)
    (flat / "grading.json").write_text(json.dumps({"expectations": [{"text": "x", "passed": True, "evidence": "e"}]}))


def test_import_skill_creator_workspace_into_grades(cli, tmp_path: Path) -> None:
    ws = tmp_path / "csv-tidy-workspace"
    _workspace(ws)
    p = cli.run("import", str(ws), "--skill", "csv-tidy", check=0)
    assert "imported 5 of 5 runs" in p.stderr
    rows = json.loads(cli.run("sql", "select eval_id, eval_name, arm, passed from grades order by arm",
                              "--format", "json", check=0).stdout)
    assert len(rows) == 5 and {r["eval_name"] for r in rows} == {"dedupe", "1"}
    assert {r["arm"]: r["passed"] for r in rows if r["eval_id"] == "0"} == {"with_skill": True, "without_skill": False}
    again = cli.run("import", str(ws), check=0)
    assert "imported 0 of 5 runs" in again.stderr
    # import --help promises diff opens an import like any run: with no benchmark.json it
    # refused ("has no per-query results and no benchmark.json"); its grades are the rates
    rid = json.loads(cli.run("sql", "select run_id from runs", "--format", "json", check=0).stdout)[0]["run_id"]
    d = json.loads(cli.run("diff", rid, rid, "--format", "json", check=0).stdout)
    assert d["kind"] == "functional" and d["arms"]["with_skill"]["pass_rate"]["delta"] == 0.0, d
    assert any("no benchmark.json" in n for n in d["notes"]), d["notes"]


def test_import_names_the_skill_as_skill_creator_named_its_workspace(cli, tmp_path: Path) -> None:
    """Without --skill the runs' skill was NULL, though the workspace is <skill>-workspace."""
    ws = tmp_path / "csv-tidy-workspace"
    _workspace(ws)
    cli.run("import", str(ws), check=0)
    rows = json.loads(cli.run("sql", "select distinct skill from runs", "--format", "json", check=0).stdout)
    assert rows == [{"skill": "csv-tidy"}], rows


def test_blind_compare_both_orders(cli) -> None:
    p = cli.run("+experiment=compare", "functional.runs=1", check=0, timeout=300)
    assert "position consistency" in p.stdout
    rows = json.loads(cli.run("sql", "select winner_arm, order1_winner_arm, order2_winner_arm, consistent "
                              "from comparisons", "--format", "json", check=0).stdout)
    assert len(rows) == 4
    for r in rows:
        assert r["consistent"] == (r["order1_winner_arm"] == r["order2_winner_arm"])
        assert r["winner_arm"] == (r["order1_winner_arm"] if r["consistent"] else "TIE")
    files = list(cli.outputs.rglob("comparison-*.json"))
    assert len(files) == 4
    for f in files:  # the top-level winner is the both-orders verdict, in order 1's letters
        c = json.loads(f.read_text())
        letter = {v: k for k, v in c["unblinded"].items()}.get(c["both_orders"]["winner_arm"], "TIE")
        assert c["winner"] == letter, f
    analyses = list(cli.outputs.rglob("analysis.json"))
    assert analyses and "improvement_suggestions" in json.loads(analyses[0].read_text())
    # the line says where they are and how many there are (it named one folder holding none)
    said = " ".join(p.stderr.split()) + " " + " ".join(p.stdout.split())
    assert f"analysis.json in {len(analyses)} of " in said and "eval-*/comparison-N.json" in said, said


@pytest.fixture
def serve_sim(tmp_path: Path):
    proc = subprocess.Popen([sys.executable, "-m", "skilleval.cli", "serve-sim", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_functional_eval_via_api_against_serve_sim(cli, serve_sim) -> None:
    cli.run("+experiment=functional_eval", *FAST, "backend=anthropic_api", f"backend.base_url={serve_sim}",
            "functional.runs=1", "functional.only=[2]", check=0, timeout=300)
    rows = json.loads(cli.run("sql", "select arm, status, tool_calls_json, skill_fired, outputs from executions",
                              "--format", "json", check=0).stdout)
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    for r in rows:
        calls = json.loads(r["tool_calls_json"])
        assert calls["read_file"] >= 1 and calls["write_file"] >= 1
        assert "outputs/vendor_products_utf8.tsv" in {o["path"] for o in r["outputs"]}
    out = next(cli.outputs.rglob("with_skill/run-1/outputs/vendor_products_utf8.tsv"))
    assert "Müller" in out.read_text(encoding="utf-8")


def test_example_judge_plugin_installed_and_used(cli, tmp_path: Path) -> None:
    cli.env["PYTHONPATH"] = str(install_plugin("skilleval-judge-example", tmp_path))
    assert "keyword_grader" in cli.run("plugins", check=0).stdout
    evals = tmp_path / "evals.json"
    src = json.loads((CSV_TIDY / "evals/evals.json").read_text())["evals"][1]
    src["expectations"] = ["The summary names the source encoding", {"type": "word_count",
                           "path": "outputs/summary.md", "max": 200, "min": 5}]
    evals.write_text(json.dumps({"evals": [src]}))
    cli.run("+experiment=functional_eval", *FAST, "judge=keyword_grader", "judge.min_share=0.3",
            f"functional.evals={evals}", "functional.runs=1", check=0, timeout=300)
    judges = json.loads(cli.run("sql", "select distinct judge, status from grades", "--format", "json",
                                check=0).stdout)
    assert {j["judge"] for j in judges} == {"keyword_grader", "word_count"}
    assert all(j["status"] in ("pass", "fail") for j in judges)
