"""`+experiment=routing`: confusion matrix over four bundled skills, recall by hand count."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SKILLS = [REPO / "experiments" / "changelog-writer", REPO / "experiments" / "csv-tidy",
          REPO / "experiments" / "distractors" / "xlsx-editor",
          REPO / "experiments" / "distractors" / "pdf-form-filler"]
CASES = REPO / "experiments" / "routing" / "cases.json"


def _skills_arg() -> str:
    return "skills=[" + ",".join(str(p) for p in SKILLS) + "]"


def test_routing_prints_matrix_and_recall_matches_a_hand_count(skilleval_cli) -> None:
    r = skilleval_cli.run("+experiment=routing", _skills_arg(), f"cases={CASES}", "progress=false",
                          "trigger.runs=3", check=0)
    assert "routing confusion matrix" in r.stdout and "routing accuracy" in r.stdout
    [results_path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(results_path.read_text())
    trials = json.loads(skilleval_cli.run("sql", "select query, outcome, fired, listing from trials",
                                          "--format", "json", check=0).stdout)
    expected = {c["query"]: c["expected_skill"] for c in json.loads(CASES.read_text())}
    assert len(trials) == 3 * len(expected)
    assert all(len(t["listing"]) == 4 for t in trials)  # every query saw all four skills
    hand: Counter[tuple[str | None, str | None]] = Counter(
        (expected[t["query"]], t["fired"]) for t in trials if t["outcome"] in ("triggered", "not_triggered"))
    for skill in ("changelog-writer", "csv-tidy", "xlsx-editor", "pdf-form-filler"):
        n = sum(v for (e, _), v in hand.items() if e == skill)
        k = hand[(skill, skill)]
        rec = res["per_skill"][skill]["recall"]
        assert (rec["k"], rec["n"]) == (k, n), skill
    none_row = res["matrix"]["none"]
    assert none_row["none"] == hand[(None, None)]
    stored = json.loads(skilleval_cli.run("sql", "select count(*) as n from queries",
                                          "--format", "json", check=0).stdout)
    assert stored[0]["n"] == len(expected)


def test_errors_are_their_own_column_never_none(skilleval_cli) -> None:
    skilleval_cli.run("+experiment=routing", _skills_arg(), f"cases={CASES}", "progress=false",
                      "backend.error_rate=0.4", "backend.max_retries=0", "trigger.max_error_rate=1",
                      check=0)
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(path.read_text())
    trials = json.loads(skilleval_cli.run("sql", "select outcome, fired from trials", "--format",
                                          "json", check=0).stdout)
    errors = sum(t["outcome"] in ("error", "timeout") for t in trials)
    assert errors > 0 and res["errors"] == errors
    assert sum(row["error"] for row in res["matrix"].values()) == errors
    valid_none = sum(t["outcome"] in ("triggered", "not_triggered") and t["fired"] is None for t in trials)
    assert sum(row["none"] for row in res["matrix"].values()) == valid_none
    assert res["accuracy"]["n"] == len(trials) - errors


def test_catalog_adds_filler_skills_to_every_listing(skilleval_cli) -> None:
    skilleval_cli.run("+experiment=routing", _skills_arg(), f"cases={CASES}", "progress=false",
                      "trigger.runs=1", "trigger.catalog=6", check=0)
    trials = json.loads(skilleval_cli.run("sql", "select listing from trials", "--format", "json",
                                          check=0).stdout)
    assert trials and all(len(t["listing"]) == 10 for t in trials)


def test_unknown_expected_skill_is_bad_input(skilleval_cli, tmp_path: Path) -> None:
    bad = tmp_path / "cases.json"
    bad.write_text(json.dumps([{"query": "hi", "expected_skill": "no-such-skill"}]))
    r = skilleval_cli.run("+experiment=routing", _skills_arg(), f"cases={bad}", check=2)
    assert "no-such-skill" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_skill_named_like_a_matrix_column_is_bad_input(skilleval_cli, tmp_path: Path) -> None:
    none = tmp_path / "none"
    none.mkdir()
    (none / "SKILL.md").write_text("---\nname: none\ndescription: Does nothing at all.\n---\n\nBody.\n")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"query": "hi", "expected_skill": None}]))
    r = skilleval_cli.run("+experiment=routing", f"skills=[{SKILLS[0]},{none}]", f"cases={cases}", check=2)
    assert "'none'" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert str(none) in r.stderr  # which folder to rename
    assert not list(skilleval_cli.outputs.rglob("results.json"))


def test_two_skills_with_one_name_are_named_with_their_folders(skilleval_cli, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "SKILL.md").write_text("---\nname: csv-tidy\ndescription: Tidies CSV files.\n---\n\nBody.\n")
    r = skilleval_cli.run("+experiment=routing", f"skills=[{SKILLS[1]},{twin}]", f"cases={CASES}", check=2)
    [line] = r.stderr.strip().splitlines()
    assert "'csv-tidy'" in line and str(SKILLS[1]) in line and str(twin) in line
