"""A SKILL.md description over the spec's 1024 characters is measured as written (what
Claude sees is the user's real folder), but not silently: `validate` fails it and skill-creator
says longer ones get truncated, so a run says the number may not be what Claude would see."""
from __future__ import annotations

import json
from pathlib import Path


def test_over_long_description_is_measured_with_a_warning(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    skill = tmp_path / "long-one"
    skill.mkdir()
    desc = "Extract invoice totals from PDF files. " * 100  # 3900 characters
    (skill / "SKILL.md").write_text(f"---\nname: long-one\ndescription: {desc}\n---\nbody\n")
    cases = tmp_path / "c.json"
    cases.write_text(json.dumps([{"query": "invoice pdf totals", "should_trigger": True},
                                 {"query": "plan a trip", "should_trigger": False}]))
    r = skilleval_cli.run("+experiment=trigger_eval", f"skill={skill}", f"cases={cases}",
                          "trigger.runs=1", check=0)
    warned = [ln for ln in r.stderr.splitlines() if "1024" in ln]
    assert len(warned) == 1 and "3899 characters" in warned[0], r.stderr


def test_angle_brackets_in_the_description_are_measured_with_a_warning(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """'<' and '>' are refused by validate, by skill-creator's validation and by skill upload
    (and in every variant and proposal); the user's own SKILL.md is measured, with one warning."""
    skill = tmp_path / "angled"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: angled\ndescription: Turn <csv> files into JSON. Use when "
                                    "asked to convert a CSV file.\n---\nbody\n")
    cases = tmp_path / "c.json"
    cases.write_text(json.dumps([{"query": "convert data.csv to json", "should_trigger": True},
                                 {"query": "plan a trip", "should_trigger": False}]))
    r = skilleval_cli.run("+experiment=trigger_eval", f"skill={skill}", f"cases={cases}",
                          "trigger.runs=1", check=0)
    warned = [ln for ln in r.stderr.splitlines() if "'<' or '>'" in ln]
    assert len(warned) == 1 and "warning" in warned[0] and "1024" not in r.stderr, r.stderr
