"""Installing a skill as a real folder (the CLI executor's sandbox): resources come along,
the description may be rewritten, and the cache key follows the resources."""
from __future__ import annotations

from pathlib import Path

from skilleval.skill_install import install_skill
from skilleval.skills import load_skill, validate_skill


def _skill(root: Path) -> Path:
    src = root / "my-skill"
    (src / "scripts").mkdir(parents=True)
    (src / "evals").mkdir()
    (src / "SKILL.md").write_text("---\nname: my-skill\ndescription: Does x.\nlicense: MIT\n---\n\n"
                                  "# My skill\nRun scripts/go.py\n", encoding="utf-8")
    (src / "scripts" / "go.py").write_text("print(1)\n", encoding="utf-8")
    (src / "evals" / "trigger_eval.json").write_text("[]", encoding="utf-8")
    return src


def test_install_copies_resources_keeps_body_and_rewrites_description(tmp_path: Path) -> None:
    skill = load_skill(_skill(tmp_path)).with_description("Turns x into y: carefully.")
    dest = tmp_path / "sandbox" / ".claude" / "skills" / "my-skill"
    install_skill(skill, dest)
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert files == ["SKILL.md", "scripts/go.py"]  # evals/ stays out, like `package`
    again = load_skill(dest)
    assert again.description == "Turns x into y: carefully."
    assert again.body == skill.body and again.frontmatter["license"] == "MIT"
    assert [p for p in validate_skill(dest) if p.level == "error"] == []


def test_content_hash_follows_resource_files(tmp_path: Path) -> None:
    src = _skill(tmp_path)
    before = load_skill(src).content_hash
    (src / "scripts" / "go.py").write_text("print(2)\n", encoding="utf-8")
    changed = load_skill(src).content_hash
    assert changed != before
    (src / "evals" / "trigger_eval.json").write_text("[{}]", encoding="utf-8")  # not a resource
    assert load_skill(src).content_hash == changed
