"""A SKILL.md description the Agent Skills spec refuses is measured as written (what Claude sees
is the user's real folder), but not silently: `validate` fails it, so a run says once what
follows. Over 1024 characters: skill-creator says longer ones get truncated, so the number may
not be what Claude would see. '<' or '>': skill-creator's validation and skill upload refuse it
(as every variant and proposal is refused), so the skill cannot ship as measured."""
from __future__ import annotations

import json
from pathlib import Path


def _run_stderr(cli, tmp_path: Path, name: str, desc: str) -> str:  # noqa: ANN001
    skill = tmp_path / name
    skill.mkdir()
    (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {desc}\n---\nbody\n")
    cases = tmp_path / "c.json"
    cases.write_text(json.dumps([{"query": "invoice pdf totals to json", "should_trigger": True},
                                 {"query": "plan a trip", "should_trigger": False}]))
    return cli.run("+experiment=trigger_eval", f"skill={skill}", f"cases={cases}",
                   "trigger.runs=1", check=0).stderr


def test_over_long_description_is_measured_with_a_warning(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    desc = "Extract invoice totals from PDF files. " * 100  # 3900 characters
    stderr = _run_stderr(skilleval_cli, tmp_path, "long-one", desc)
    warned = [ln for ln in stderr.splitlines() if "1024" in ln]
    assert len(warned) == 1 and "3899 characters" in warned[0], stderr


def test_angle_brackets_in_the_description_are_measured_with_a_warning(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    stderr = _run_stderr(skilleval_cli, tmp_path, "angled",
                         "Turn <pdf> invoices into JSON. Use when asked to convert an invoice.")
    warned = [ln for ln in stderr.splitlines() if "'<' or '>'" in ln]
    assert len(warned) == 1 and "warning" in warned[0] and "1024" not in stderr, stderr
