"""trigger_opt end to end through the real `skilleval` console script, on the stub backend."""
from __future__ import annotations

import json
import shutil

import pytest

from opt_helpers import EXAMPLE, make_skill


def test_main_job_improves_the_weak_example_on_test(cli):
    out = cli.run("+experiment=trigger_opt")
    assert out.returncode == 0, out.stderr
    assert "plan:" in out.stderr and "total ≤" in out.stderr
    assert "test (held out)" in out.stdout and "description diff" in out.stdout
    [res] = cli.results()
    for key in ("exit_reason", "original_description", "best_description", "best_score",
                "best_train_score", "best_test_score", "final_description", "iterations_run",
                "holdout", "train_size", "test_size", "history"):
        assert key in res
    h = res["history"][0]
    assert h["results"] == h["train_results"] and h["passed"] == h["train_passed"]
    orig, best = res["test"]["original"]["accuracy"], res["test"]["best"]["accuracy"]
    assert best["value"] > orig["value"], (orig, best)
    assert 0 <= best["low"] <= best["value"] <= best["high"] <= 1
    assert res["validation_size"] == 5 and res["train_test_gap"] is not None
    folder = next(cli.outputs.rglob("results.json")).parent
    assert (folder / "best_description.txt").read_text().strip() == res["best_description"]
    assert res["calls"] > 0
    # skill-creator's iterations_run counts evaluations, the original's included: with one
    # candidate a round, its history's length (it was one less)
    assert res["iterations_run"] == len(res["history"]) == res["proposal_rounds"] + 1

    # The same command again: resumes the finished state, reads every trial from the cache.
    again = cli.run("+experiment=trigger_opt")
    assert again.returncode == 0, again.stderr
    assert "resuming" in again.stderr
    res2 = cli.results()[-1]
    assert res2["calls"] == 0 and res2["best_description"] == res["best_description"]
    rows = cli.sql("select count(distinct run_id) as runs, count(*) as n from candidates "
                   "where role = 'iteration'")
    assert rows[0]["runs"] == 1  # the second run repeated no iteration


@pytest.mark.parametrize("proposer", ["llm", "stub"])
def test_validation_and_test_queries_never_reach_the_proposer(cli, tmp_path, proposer):
    cases = json.loads((EXAMPLE / "evals" / "trigger_eval.json").read_text())
    for i, c in enumerate(cases):
        c["query"] += f" (ticket qqsentinel{i}x)"
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    out = cli.run("+experiment=trigger_opt", f"proposer={proposer}", f"cases={path}",
                  "optimize.patience=5", "optimize.max_iterations=3")
    assert out.returncode == 0, out.stderr
    split = {r["query"]: r["split"] for r in cli.sql("select query, split from splits")}
    held_out = [f"qqsentinel{i}x" for i, c in enumerate(cases) if split[c["query"]] != "train"]
    train = [f"qqsentinel{i}x" for i, c in enumerate(cases) if split[c["query"]] == "train"]
    assert len(held_out) == 10 and len(train) == 10
    logs = list(cli.outputs.rglob("logs/improve_iter_*.json"))
    assert logs
    text = "\n".join(p.read_text() for p in logs)  # every request and every prompt sent
    assert not [s for s in held_out if s in text]
    assert any(s in text for s in train)  # the logs do hold the train queries


def _one_error_line(out):
    assert out.returncode == 2, (out.returncode, out.stderr)
    # Hydra's own "Error executing job with overrides" preamble is the spine's to silence.
    lines = [l for l in out.stderr.splitlines() if l.strip() and "warning" not in l
             and not l.startswith("Error executing job with overrides")]
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    return lines[0]


def test_bad_inputs_exit_2_with_one_line(cli, tmp_path):
    cases = [{"query": f"q{i}", "should_trigger": True} for i in range(8)]
    no_desc = make_skill(tmp_path, "no-desc", description=None, cases=cases)
    assert "description" in _one_error_line(cli.run("+experiment=trigger_opt", f"skill={no_desc}"))

    one_class = make_skill(tmp_path, "one-class", cases=cases)
    line = _one_error_line(cli.run("+experiment=trigger_opt", f"skill={one_class}"))
    assert "only should_trigger=true" in line

    line = _one_error_line(cli.run("+experiment=trigger_opt", "budget.max_calls=20"))
    assert "budget.max_calls=20 is too small for one iteration" in line
    assert not (cli.store / "trials").exists()  # refused before any call


def test_apply_refuses_what_it_could_not_write_back_safely_before_any_call(cli, tmp_path):
    """With description=... the loop's original is that wording, so a winner was never compared
    with what SKILL.md says; a run folder inside the skill folder would take the backup (and
    the run's files) into it. Both are bad input, refused before the first call."""
    skill = tmp_path / "changelog-writer"
    shutil.copytree(EXAMPLE, skill)
    before = (skill / "SKILL.md").read_text()
    line = _one_error_line(cli.run("+experiment=trigger_opt", f"skill={skill}", "optimize.apply=true",
                                   "description='Helps with files.'"))
    assert "optimize.apply=true" in line and "description=" in line, line
    line = _one_error_line(cli.run("+experiment=trigger_opt", f"skill={skill}", "optimize.apply=true",
                                   f"hydra.run.dir={skill}/runout"))
    assert "optimize.apply=true" in line and str(skill / "runout") in line, line
    # no test split: the best would never be written, after the whole paid loop
    line = _one_error_line(cli.run("+experiment=trigger_opt", f"skill={skill}", "optimize.apply=true",
                                   "splitter=none"))
    assert "splitter=none" in line and "test" in line, line
    # a frontmatter the description cannot be replaced in, whole, before the first call
    flow = tmp_path / "flow" / "changelog-writer"
    shutil.copytree(EXAMPLE, flow)
    body = (flow / "SKILL.md").read_text().split("\n---\n", 1)[1]
    (flow / "SKILL.md").write_text('---\n{name: changelog-writer, description: "Helps with files."}\n---\n' + body)
    line = _one_error_line(cli.run("+experiment=trigger_opt", f"skill={flow}", "optimize.apply=true"))
    assert "in place" in line and str(flow / "SKILL.md") in line, line
    # in a sweep each job would start from the previous job's winner
    out = cli.run("-m", "+experiment=trigger_opt", f"skill={skill}", "optimize.apply=true", "optimize.alpha=0.1,0.3")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    line = out.stderr.strip().splitlines()[0]
    assert "in a sweep" in line and "optimize.apply=true" in line, line
    # without skill=, the bundled demo (installed with skilleval) would be rewritten
    demo_before = (EXAMPLE / "SKILL.md").read_text()
    line = _one_error_line(cli.run("+experiment=trigger_opt", "optimize.apply=true"))
    assert "bundled example" in line and "skill=PATH" in line, line
    assert (EXAMPLE / "SKILL.md").read_text() == demo_before
    assert (skill / "SKILL.md").read_text() == before
    assert not (cli.store / "trials").exists()  # refused before any call


def test_budget_stops_gracefully_and_keeps_what_was_learned(cli):
    out = cli.run("+experiment=trigger_opt", "budget.max_calls=200", "optimize.patience=5",
                  "optimize.alpha=0.001", "proposer=stub", "gate.min_accuracy=0.0")
    assert out.returncode == 4, out.stderr  # a budget stop has its own exit code
    # the cap the user set, not the loop's share of it (the test's reserve held back)
    [stop] = [line for line in out.stderr.splitlines() if "budget stop:" in line]
    assert "budget.max_calls=200" in stop, stop
    res = cli.results()[-1]
    assert res["exit_reason"].startswith("budget")
    assert res["calls"] <= 200 and res["test"]["best"] is not None
    # a budget-stopped run is partial: its gates are not checked, never "passed"
    assert res["partial"] is True
    assert "gates not checked" in out.stderr and "gate passed" not in out.stdout


def test_a_money_cap_holds_back_the_held_out_test_too(cli):
    """Only budget.max_calls held the test's calls back: with budget.max_usd the loop spent
    the whole cap and the winner was never checked on test ("NOT checked on test")."""
    out = cli.run("+experiment=trigger_opt", "backend.input_usd_per_mtok=1000", "budget.max_usd=77",
                  "optimize.patience=5", "optimize.alpha=0.001", "proposer=stub")
    assert out.returncode == 4, out.stderr
    assert "held back for the held-out test" in out.stdout + out.stderr
    res = cli.results()[-1]
    assert res["exit_reason"].startswith("budget") and res["cost_usd"] <= 77
    assert res["test"]["best"] is not None and not res["test"]["partial"], res["test"]


def test_apply_writes_a_valid_skill_and_keeps_a_backup(cli, tmp_path):
    skill = tmp_path / "changelog-writer"
    shutil.copytree(EXAMPLE, skill)
    before = (skill / "SKILL.md").read_text()
    out = cli.run("+experiment=trigger_opt", f"skill={skill}", "optimize.apply=true",
                  "distractors=${example_distractors:}")  # listed as for the bundled copy
    assert out.returncode == 0, out.stderr
    after = (skill / "SKILL.md").read_text()
    res = cli.results()[-1]
    assert res["best_description"] in after.replace("\n  ", " ") or res["best_description"] in after
    assert after.split("\n---\n", 1)[1] == before.split("\n---\n", 1)[1]  # body kept
    assert "wrote the best description" in out.stderr  # best won on validation and on test
    folder = next(cli.outputs.rglob("results.json")).parent
    assert [p.read_text() for p in folder.glob("SKILL.md.bak-*")] == [before]
    assert not list(skill.glob("SKILL.md.bak-*"))
    assert cli.run("validate", str(skill)).returncode == 0


def test_multirun_sweeps_into_one_store(cli):
    # one proposal round per job: the sweep's bookkeeping is what is checked, not the search
    out = cli.run("-m", "+experiment=trigger_opt", "optimize.candidates=1,3", "proposer=llm,stub",
                  "optimize.max_iterations=1")
    assert out.returncode == 0, out.stderr
    rows = cli.sql("select count(distinct run_id) as jobs, count(distinct sweep_id) as sweeps, "
                   "count(distinct run_key) as keys from candidates")
    assert rows == [{"jobs": 4, "sweeps": 1, "keys": 4}]
    assert len(cli.results()) == 4


def test_a_lone_candidate_that_loses_its_screen_gets_no_more_runs(cli):
    """optimize.candidates=1 is screened too (issue 8 item 9: spend the calls where they
    inform the choice): a candidate that does not beat the incumbent on one run per query
    is rejected there, and the calls it would have taken are not made."""
    out = cli.run("+experiment=trigger_opt", "optimize.candidates=1", "progress=false")
    assert out.returncode == 0, out.stderr
    [res] = cli.results()
    screened = [h for h in res["history"] if h["decision"].startswith("rejected on the screen")]
    assert screened, [h["decision"] for h in res["history"]]
    tv = res["train_size"] + res["validation_size"]
    for h in screened:  # one run per train and validation query, nothing more
        runs = sum(r["runs"] for r in h["train_results"]) + \
            sum(r["runs"] for r in h["validation_results"])
        assert runs == tv, (runs, tv)
