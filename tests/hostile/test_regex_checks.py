"""Item 6: typed regex checks cannot hang a run (catastrophic patterns are a judge error after a
time limit, never a pass or a fail), and an invalid pattern is exit 2 at load."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from shared_helpers import one_line_error

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"


def _skill_with_checks(tmp_path: Path, checks: list[dict]) -> Path:
    skill = tmp_path / "csv-tidy"
    shutil.copytree(CSV_TIDY, skill)
    (skill / "evals" / "files" / "bomb.txt").write_text("a" * 40 + "!\n" + "x" * 3000 + "\n")
    first = json.loads((skill / "evals" / "evals.json").read_text())["evals"][0]
    first["files"] = [*first["files"], "evals/files/bomb.txt"]
    first["expectations"] = checks
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "csv-tidy", "evals": [first]}))
    return skill


def test_catastrophic_regex_is_a_judge_error_not_a_hang(skilleval_cli, tmp_path: Path, canary) -> None:
    skill = _skill_with_checks(tmp_path, [
        {"type": "regex", "path": "evals/files/bomb.txt", "pattern": "^(a+)+$", "timeout_s": 0.5},
        {"type": "regex", "path": "evals/files/bomb.txt", "pattern": "(x+x+)+y", "timeout_s": 0.5},
        {"type": "file_exists", "path": "outputs/contacts_clean.csv"},
    ])
    r = skilleval_cli.run("+experiment=functional_eval", "backend=stub", f"skill={skill}",
                          "functional.runs=1", "functional.bootstrap=50", "functional.analyze=false",
                          timeout=90)
    assert r.returncode == 0, r.stderr
    grades = [json.loads(p.read_text()) for p in skilleval_cli.outputs.rglob("grading.json")]
    assert len(grades) == 2
    for g in grades:
        by_text = {e["text"]: e for e in g["expectations"]}
        slow = [e for t, e in by_text.items() if "(x+x+)+y" in t]
        assert slow and slow[0].get("passed") is None, slow  # an error, neither pass nor fail
    canary.assert_untouched()


def test_invalid_pattern_is_exit_2_at_load(skilleval_cli, tmp_path: Path) -> None:
    skill = _skill_with_checks(tmp_path, [{"type": "regex", "path": "outputs/x", "pattern": "(unclosed"}])
    r = skilleval_cli.run("+experiment=functional_eval", "backend=stub", f"skill={skill}")
    line = one_line_error(r, 2)
    assert "invalid regex /(unclosed/" in line and "expectation #0" in line
    assert not (skilleval_cli.store / "executions").exists()
