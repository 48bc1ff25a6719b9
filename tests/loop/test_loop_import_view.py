"""Audit of the round trip: a skill-creator workspace imported with `skilleval import` is a
run that `skilleval view`, `report` and `diff` can open.

The importer wrote executions and grades under a run id it printed, but no ``runs`` row: the
viewer listed nothing, and `diff`/`report` answered "no run". It also filed every iteration
of a workspace under one run, so iteration-1's and iteration-2's executions of an eval read
as repeats of one measurement."""
from __future__ import annotations

import json
from pathlib import Path

from skilleval.store.catalog import Store
from skilleval.viewer.api import Api


def _workspace(root: Path) -> None:
    """skill-creator's layout: iteration-N/eval-0-dedupe/<config>/run-N, feedback.json per
    iteration, benchmark.json by its aggregator."""
    for it, (w, wo) in ((1, (False, False)), (2, (True, False))):
        base = root / f"iteration-{it}"
        for cfg, passed in (("with_skill", w), ("without_skill", wo)):
            for n in (1, 2):
                run = base / "eval-0-dedupe" / cfg / f"run-{n}"
                (run / "outputs").mkdir(parents=True)
                (run / "outputs" / "out.csv").write_text("email\na@x\n")
                (run / "grading.json").write_text(json.dumps({
                    "expectations": [{"text": "no duplicate emails", "passed": passed, "evidence": "rows"}],
                    "summary": {"passed": int(passed), "failed": int(not passed), "total": 1,
                                "pass_rate": float(passed)}}))
        (base / "eval-0-dedupe" / "eval_metadata.json").write_text(
            json.dumps({"eval_id": 0, "eval_name": "dedupe", "prompt": "dedupe the contacts"}))
        (base / "benchmark.json").write_text(json.dumps({"metadata": {"skill_name": "csv-tidy"}, "runs": [
            {"eval_id": 0, "eval_name": "dedupe", "configuration": cfg, "run_number": n,
             "result": {"pass_rate": float(p)}}
            for cfg, p in (("with_skill", w), ("without_skill", wo)) for n in (1, 2)]}))
    (root / "iteration-1" / "feedback.json").write_text(json.dumps({"reviews": [
        {"run_id": "eval-0-dedupe-with_skill-run-1", "feedback": "kept the duplicate header",
         "timestamp": "2026-09-01T10:20:00.000Z"}], "status": "complete"}))


def test_an_imported_workspace_is_a_run_per_iteration_that_the_viewer_and_diff_open(
        skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    ws = tmp_path / "csv-tidy-workspace"
    _workspace(ws)
    p = skilleval_cli.run("import", str(ws), "--skill", "csv-tidy", check=0)
    store = Store(skilleval_cli.store)
    runs = store.query("SELECT run_id, status, output_dir FROM runs ORDER BY run_id").to_pylist()
    assert [(r["status"], Path(r["output_dir"]).name) for r in runs] == [
        ("done", "iteration-1"), ("done", "iteration-2")]
    first, second = (r["run_id"] for r in runs)
    assert first in p.stderr and second in p.stderr
    per_run = store.query("SELECT run_id, count(*) AS n FROM executions GROUP BY 1 ORDER BY 1").to_pylist()
    assert [r["n"] for r in per_run] == [4, 4]  # not 8 repeats of one measurement

    api = Api(Store(skilleval_cli.store))
    assert [r["run_id"] for r in api.get("/api/runs")["rows"]] == [second, first]
    assert {"outputs", "benchmark"} <= set(api.run(second)["pages"])
    page = api.get(f"/api/run/{second}/functional")
    assert (page["iteration"], page["previous_iteration"]) == ("iteration-2", "iteration-1")
    [ev] = page["evals"]
    assert ev["prompt"] == "dedupe the contacts"
    run1 = next(r for r in ev["runs"] if r["review_id"] == "eval-0-dedupe-with_skill-run-1")
    assert run1["previous"]["feedback"] == "kept the duplicate header"
    assert [f["name"] for f in run1["files"]] == ["out.csv"]

    d = json.loads(skilleval_cli.run("diff", "latest~1", "latest", "--format", "json", check=0).stdout)
    assert (d["a"]["run_id"], d["b"]["run_id"]) == (first, second)
    assert d["arms"]["with_skill"]["pass_rate"]["delta"] == 1.0

    again = skilleval_cli.run("import", str(ws), check=0)
    assert "nothing new" in again.stderr
    assert store.query("SELECT count(DISTINCT run_id) AS n FROM runs").to_pylist() == [{"n": 2}]


def test_latest_reaches_an_imported_workspace_without_benchmark_json(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """A workspace skill-creator never aggregated has grades and no benchmark.json: `diff RUN
    RUN` read it from its grades, but `latest` skipped it ("0 finished runs of experiment
    import") and plain `diff latest~1 latest` took older runs instead."""
    ws = tmp_path / "csv-tidy-workspace"
    _workspace(ws)
    for bench in ws.rglob("benchmark.json"):
        bench.unlink()
    skilleval_cli.run("import", str(ws), "--skill", "csv-tidy", check=0)
    d = skilleval_cli.run("diff", "latest~1", "latest", "--experiment", "import", "--format", "json", check=0)
    doc = json.loads(d.stdout)
    assert doc["kind"] == "functional" and doc["a"]["label"].endswith("iteration-1"), doc["a"]
    assert doc["b"]["label"].endswith("iteration-2")
