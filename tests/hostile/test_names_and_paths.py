"""Item 1: a skill's `name` is validated wherever a skill loads, and every installed path is
built with a containment check (nothing lands outside the sandbox)."""
from __future__ import annotations

from pathlib import Path

import pytest
from shared_helpers import one_line_error
from hostile_files import write_skill

from skilleval.domain import ListedSkill, Skill, Trial
from skilleval.paths import PathEscape, contained
from skilleval.skill_install import install_skill

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"
QUERIES = [("tidy this csv file", True), ("what is the weather", False)]


def _hostile_names(canary: Path) -> list[str]:
    return [str(canary / "other-skill"), "../../../../canary/escaped", "a/b", "..", "Bad_Name",
            "x" * 65, "evil\\..\\x"]


@pytest.mark.parametrize("role", ["skill", "distractors"])
def test_trigger_eval_refuses_hostile_names_before_any_call(skilleval_cli, canary, tmp_path: Path,
                                                            role: str) -> None:
    good = write_skill(tmp_path / "skills", "good-skill", "good-skill", queries=QUERIES)
    for i, name in enumerate(_hostile_names(canary.root)):
        bad = write_skill(tmp_path / "skills", f"bad-{i}", name, queries=QUERIES)
        args = [f"skill={bad}"] if role == "skill" else [f"skill={good}", f"distractors=[{bad}]"]
        r = skilleval_cli.run("+experiment=trigger_eval", "backend=stub", *args)
        line = one_line_error(r, 2)
        assert "kebab-case" in line or "characters; at most" in line, line
        assert str(bad) in line
    assert not skilleval_cli.results()
    canary.assert_untouched()


@pytest.mark.parametrize("role", ["skill", "old_skill"])
def test_functional_eval_refuses_hostile_names(skilleval_cli, canary, tmp_path: Path, role: str) -> None:
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(CSV_TIDY, bad)
    md = bad / "SKILL.md"
    text = md.read_text()
    md.write_text(text.replace("name: csv-tidy", f"name: {canary.root / 'other-skill'}", 1))
    args = ([f"skill={bad}"] if role == "skill" else
            ["functional.arms=[old_skill,with_skill]", f"functional.old_skill={bad}"])
    r = skilleval_cli.run("+experiment=functional_eval", "backend=stub", *args)
    assert "kebab-case" in one_line_error(r, 2)
    canary.assert_untouched()


def test_contained_refuses_every_escape(tmp_path: Path, canary) -> None:
    base = tmp_path / "sandbox"
    base.mkdir()
    (base / "link").symlink_to(canary.root)
    for part in (str(canary.root), "../x", "a/../../x", "link/secret.txt", "link", "", "a\\b", "a\0b"):
        with pytest.raises(PathEscape):
            contained(base, part)
    assert contained(base, "ok", "SKILL.md") == base.resolve() / "ok" / "SKILL.md"
    canary.assert_untouched()


def test_install_skill_never_writes_outside_its_folder(tmp_path: Path, canary) -> None:
    """A Skill built without load_skill (a plugin, a future loader): the install still checks."""
    src = write_skill(tmp_path, "src-skill", "src-skill")
    skills_dir = tmp_path / "sandbox" / ".claude" / "skills"
    skills_dir.mkdir(parents=True)
    for name in (str(canary.root / "other-skill"), "../../../canary/other-skill"):
        skill = Skill(name, "desc", "# body\n", src.resolve(), {"name": name, "description": "d"}, "")
        with pytest.raises(PathEscape):
            install_skill(skill, contained(skills_dir, name))
    canary.assert_untouched()


def test_claude_cli_project_folder_refuses_hostile_listing(tmp_path: Path, canary) -> None:
    from skilleval.backends.claude_cli import ClaudeCliBackend
    from skilleval.backends.params import ClaudeCliParams

    work = tmp_path / "work"
    work.mkdir()
    backend = ClaudeCliBackend.__new__(ClaudeCliBackend)
    backend.params = ClaudeCliParams(work_root=str(work))
    listing = (ListedSkill("../../../canary/escaped", "d"),)
    trial = Trial("k", "c", "q", "x", listing, 0, "sim-1", ())
    with pytest.raises(PathEscape):
        backend._project(trial)
    assert not (tmp_path / "canary" / "escaped").exists()
    canary.assert_untouched()


def test_skill_with_a_symlink_out_is_refused_at_load(skilleval_cli, canary, tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "skills", "linky", "linky", queries=QUERIES)
    (skill / "references").mkdir()
    (skill / "references" / "secret.md").symlink_to(canary.root / "secret.txt")
    r = skilleval_cli.run("+experiment=trigger_eval", "backend=stub", f"skill={skill}")
    assert "symlink points outside the skill folder" in one_line_error(r, 2)
    p = skilleval_cli.run("package", str(skill), "-o", str(tmp_path / "dist"))
    assert "symlink points outside" in one_line_error(p, 2)
    assert not (tmp_path / "dist" / "linky.skill").exists()
    canary.assert_untouched()
