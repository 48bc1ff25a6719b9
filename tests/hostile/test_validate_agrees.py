"""`skilleval validate` must refuse what a run and `package` refuse: a skill folder whose
symlink points outside it (or dangles) used to be "Skill is valid!" (exit 0) while
`trigger_eval` and `package` on the same folder exit 2."""
from __future__ import annotations

from pathlib import Path

import pytest
from shared_helpers import one_line_error


@pytest.mark.parametrize("target", ["/etc/passwd", "missing-file"])
def test_validate_refuses_the_symlink_a_run_refuses(skilleval_cli, tmp_path: Path, target: str) -> None:
    skill = tmp_path / "linky"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: linky\ndescription: Extract invoices from PDFs.\n---\nbody\n")
    (skill / "ref.txt").symlink_to(target)
    run = skilleval_cli.run("+experiment=trigger_eval", f"skill={skill}")
    run_line = one_line_error(run, 2)
    r = skilleval_cli.run("validate", str(skill))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Skill is valid!" not in r.stdout
    assert "Traceback" not in r.stderr
    assert "ref.txt" in r.stderr and "symlink" in r.stderr, r.stderr
    assert "symlink" in run_line
