"""Regression tests for bugs found in review: real subprocesses, files, DuckDB and serve-sim."""
from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest

from skilleval.functional.benchmark import build_benchmark, render_md
from skilleval.functional.grader import LlmGrader, LlmGraderParams
from skilleval.functional.importer import discover, import_workspace
from skilleval.functional.judges import JudgeInput
from skilleval.functional.tasks import Expectation, TaskCase, load_evals
from skilleval.sim.process import SimProcess
from skilleval.store.catalog import Store

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"
FAST = ("functional.bootstrap=100", "functional.runs=1", "functional.analyze=false")


@pytest.fixture
def cli(skilleval_cli):  # noqa: ANN001, ANN201
    return skilleval_cli


def _latest_bench(cli) -> dict:  # noqa: ANN001
    found = sorted(cli.outputs.rglob("iteration-*/benchmark.json"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads(found[-1].read_text())


def test_retried_execution_is_regraded_not_judged_by_its_failed_attempt(cli) -> None:
    """An errored execution is retried under the same key; its old 'no usable output' fails
    must not be reused as the grades of the new, successful attempt."""
    with SimProcess() as sim:
        args = ("+experiment=functional_eval", *FAST, "backend=anthropic_api",
                f"backend.base_url={sim.url}", "backend.max_retries=0", "functional.only=[2]",
                "functional.concurrency=1")
        sim.configure(fail_next=[400])  # the first executor request fails for good
        cli.run(*args, check=3, timeout=300)  # one arm has no valid run: nothing to compare
        first = _latest_bench(cli)
        assert [r["status"] for r in first["runs"]] == ["ok"]
        assert [r["status"] for r in first["errored_runs"]] == ["error"]
        cli.run(*args, check=0, timeout=300)
    second = _latest_bench(cli)
    assert [r["status"] for r in second["runs"]] == ["ok", "ok"]
    for r in second["runs"]:
        assert not any("no usable output" in e["evidence"] for e in r["expectations"]), r["configuration"]


def test_input_file_contents_are_part_of_the_execution_key(cli, tmp_path: Path) -> None:
    skill = tmp_path / "csv-tidy"
    shutil.copytree(CSV_TIDY, skill)
    args = ("+experiment=functional_eval", *FAST, f"skill={skill}", "functional.only=[1]")
    cli.run(*args, check=0, timeout=300)
    data = skill / "evals" / "files" / "contacts.csv"
    data.write_text(data.read_text().replace("@", "@x"))
    again = cli.run(*args, check=0, timeout=300)
    assert "executions: 2 run, 0 from the store" in again.stderr


def test_evals_without_expectations_report_na_not_crash(cli, tmp_path: Path) -> None:
    evals = json.loads((CSV_TIDY / "evals" / "evals.json").read_text())
    ev = evals["evals"][0]
    ev.pop("expectations", None)
    ev.pop("assertions", None)
    path = tmp_path / "evals.json"
    path.write_text(json.dumps({"skill_name": "csv-tidy", "evals": [ev]}))
    # nothing to grade: no crash, n/a, and the run is flagged as not measured (exit 3)
    p = cli.run("+experiment=functional_eval", *FAST, f"functional.evals={path}", check=3, timeout=300)
    assert "pass-rate delta (with_skill - without_skill): n/a" in p.stdout
    b = _latest_bench(cli)
    assert b["per_eval"][0]["delta_pass_rate"] is None and b["delta_stats"]["pass_rate"]["delta"] is None


def _run(eval_name: str, cfg: str, n: int, pass_rate: float | None) -> dict:
    return {"eval_id": eval_name, "eval_name": eval_name, "configuration": cfg, "run_number": n,
            "result": {"pass_rate": pass_rate, "passed": 0, "failed": 0, "total": 0 if pass_rate is None else 1,
                       "time_seconds": 1.0, "tokens": 10}, "expectations": []}


def test_per_eval_delta_is_none_when_an_arm_has_no_gradable_run() -> None:
    """Baseline runs that are all judge errors must not count as a 0% baseline."""
    runs = [_run("a", "with_skill", 1, 1.0), _run("a", "without_skill", 1, None),
            _run("b", "with_skill", 1, 1.0), _run("b", "without_skill", 1, 0.5)]
    b = build_benchmark(runs, {"skill_name": "s"}, "with_skill", "without_skill", n_boot=50)
    rows = {r["eval_name"]: r for r in b["per_eval"]}
    assert rows["a"]["delta_pass_rate"] is None and rows["b"]["delta_pass_rate"] == 0.5
    assert "| a | 100% (1 run) | n/a | n/a |" in render_md(b)


def test_evals_sharing_a_name_get_distinct_folders(tmp_path: Path) -> None:
    p = tmp_path / "evals.json"
    p.write_text(json.dumps([{"prompt": "Clean the CSV file evals/files/a.csv: trim cells and dedupe rows, then write it"},
                             {"prompt": "Clean the CSV file evals/files/a.csv: trim cells and dedupe rows, then write b"},
                             {"id": 7, "name": "Dedupe", "prompt": "x"}, {"id": 8, "name": "dedupe", "prompt": "y"}]))
    _, cases = load_evals(p)
    assert len({c.dir_name for c in cases}) == 4


def test_import_orders_evals_numerically_and_accepts_assertions(tmp_path: Path) -> None:
    import skilleval.functional.records  # noqa: F401  (registers the tables)

    ws = tmp_path / "ws"
    for i in (10, 2, 1):
        run = ws / "iteration-1" / f"eval-{i}" / "with_skill" / "run-1"
        (run / "outputs").mkdir(parents=True)
        (run / "grading.json").write_text(json.dumps(
            {"assertions": [{"text": f"check {i}", "passed": True, "evidence": "ok"}]}))
    assert [r["eval_dir"].name for r in discover(ws)] == ["eval-1", "eval-2", "eval-10"]
    store = Store(tmp_path / "store")
    res = import_workspace(ws, store)
    assert res["grades"] == 3 and res["new_grades"] == 3


def test_llm_grader_identity_tracks_what_changes_the_grade() -> None:
    a = LlmGrader(LlmGraderParams()).identity()
    assert a != LlmGrader(LlmGraderParams(max_tokens=64)).identity()
    assert "prompt" in a  # edits of the grader instructions invalidate cached grades


def test_compare_is_rerun_when_expectations_change(cli, tmp_path: Path) -> None:
    evals = json.loads((CSV_TIDY / "evals" / "evals.json").read_text())
    ev = evals["evals"][0]
    path = tmp_path / "evals.json"
    path.write_text(json.dumps({"evals": [ev]}))
    args = ("+experiment=compare", "functional.runs=1", f"functional.evals={path}")
    cli.run(*args, check=0, timeout=300)
    ev["expectations"] = ev["expectations"][:1] + ["The report says how many duplicates were removed."]
    path.write_text(json.dumps({"evals": [ev]}))
    cli.run(*args, check=0, timeout=300)
    rows = json.loads(cli.run("sql", "select count(distinct key) as k from comparisons", "--format", "json",
                              check=0).stdout)
    assert rows[0]["k"] == 2


def test_example_word_count_judge_stays_inside_the_sandbox(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "plugins" / "skilleval-judge-example"))
    try:
        from skilleval_judge_example import WordCount, WordCountParams
    finally:
        sys.path.pop(0)
    (tmp_path / "secret.txt").write_text("one two three four five six")
    box = tmp_path / "box"
    box.mkdir()
    exp = Expectation("outside", {"type": "word_count", "path": "../secret.txt", "min": 1})
    item = JudgeInput(TaskCase("1", "t", "p"), (exp,), box, "", ())
    v = asyncio.run(WordCount(WordCountParams()).grade(item)).verdicts[0]
    assert v.passed is False and "escapes" in v.evidence
    # it asks no model, and says so: after a budget stop it still grades (deterministic)
    assert WordCount.deterministic is True


class _NotesJudge:
    """A third-party-style judge that reports user notes (the simulator never does)."""

    name = "notes_judge"
    samples = 1
    deterministic = True

    def identity(self) -> dict:
        return {"judge": self.name}

    async def grade(self, item: JudgeInput):  # noqa: ANN201
        from skilleval.functional.judges import JudgeOutput, Verdict

        return JudgeOutput([Verdict(e.text, True, "ok") for e in item.expectations],
                           user_notes_summary={"uncertainties": ["u"], "needs_review": [], "workarounds": []})


def test_cached_grades_keep_user_notes(tmp_path: Path) -> None:
    """A resumed run rebuilds grading.json from the store: user notes must survive."""
    from types import SimpleNamespace

    import skilleval.functional.records  # noqa: F401
    from skilleval.backends.stub import StubBackend, StubParams
    from skilleval.functional.arms import build_arms
    from skilleval.functional.runner import FunctionalRunner
    from skilleval.execution import ArmSettings
    from skilleval.skills import load_skill
    from skilleval.store.schema import SCHEMA_VERSION

    skill = load_skill(CSV_TIDY)
    _, cases = load_evals(CSV_TIDY / "evals" / "evals.json")
    cases = [TaskCase(c.id, c.name, c.prompt, files=c.files, expectations=(Expectation("fine"),))
             for c in cases[:1]]
    arms = build_arms(["with_skill", "without_skill"], skill, ArmSettings(model="sim-1"), load_skill=load_skill)

    def notes(run_id: str) -> list:
        store = Store(tmp_path / "store")
        job = SimpleNamespace(store=store, experiment="t", run_id=run_id, budget=None,
                              backend=StubBackend(StubParams()), identity_row=lambda: {
                                  "run_id": run_id, "sweep_id": run_id, "job_num": 0,
                                  "experiment": "t", "schema_version": SCHEMA_VERSION})

        async def go() -> list:
            runner = FunctionalRunner(job, CSV_TIDY, _NotesJudge(), None)
            plan = runner.plan(cases, arms, 1, tmp_path / run_id)
            await runner.execute_all(plan)
            await runner.grade_all(plan)
            store.close()
            return [(r.grades_cached, r.user_notes) for r in plan]
        return asyncio.run(go())
    first, second = notes("r1"), notes("r2")
    assert [c for c, _ in second] == [1, 1]
    assert [n for _, n in second] == [n for _, n in first] == [{"uncertainties": ["u"], "needs_review": [],
                                                               "workarounds": []}] * 2


def test_a_run_with_nothing_graded_exports_no_zero_pass_rate(cli, tmp_path: Path) -> None:
    """A valid run whose expectations are all judge errors (or that has none) used to get a
    grading.json with pass_rate 0.0, which skill-creator's aggregator averages as a 0 % run.
    It now has no grading.json (the aggregator skips it, as it skips an errored run) and its
    judge errors are in ungraded.json, which the viewer shows."""
    src = json.loads((CSV_TIDY / "evals" / "evals.json").read_text())["evals"][0]
    evals = [{"id": 1, "name": "judge-fails", "prompt": src["prompt"], "files": src["files"],
              "expectations": ["[[sim:invalid-json]] every email is lowercase"]},
             {"id": 2, "name": "no-expectations", "prompt": src["prompt"], "files": src["files"]},
             {"id": 3, "name": "graded", "prompt": src["prompt"], "files": src["files"],
              "expectations": [{"type": "file_exists", "path": "outputs/contacts_clean.csv"}]}]
    path = tmp_path / "evals.json"
    path.write_text(json.dumps({"skill_name": "csv-tidy", "evals": evals}))
    cli.run("+experiment=functional_eval", *FAST, f"functional.evals={path}", "functional.runs=1",
            "functional.analyze=false", check=0, timeout=300)
    [it] = cli.outputs.rglob("iteration-1")
    # skill-creator's aggregator: eval-*/<config>/run-*/grading.json, summary.pass_rate pooled
    pooled = {g.parent.parent.parent.name: json.loads(g.read_text())["summary"]["pass_rate"]
              for g in it.glob("eval-*/*/run-*/grading.json")}
    assert set(pooled) == {"eval-graded"}  # the runs with something graded, and only those
    ungraded = [json.loads(g.read_text()) for g in it.glob("eval-judge-fails/*/run-*/ungraded.json")]
    assert len(ungraded) == 2
    assert all(u["summary"]["pass_rate"] is None and u["summary"]["judge_errors"] == 1 for u in ungraded)
    out = tmp_path / "r.html"
    cli.run("report", "latest", "-o", str(out))
    assert "JUDGE ERROR: invalid grader reply" in out.read_text()  # the viewer shows why
