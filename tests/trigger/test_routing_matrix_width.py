"""Routing's confusion matrix stays readable in 80 columns with many skills: short column
keys with the names in the rows and a legend (the per-skill table's ``key`` column), or,
when even keys do not fit, one line per non-zero cell. Skill names stay escaped."""
from __future__ import annotations

import json
import re
from pathlib import Path

from rich.console import Console

from skilleval.trigger.routing_table import matrix_table, print_tables

TOPICS = ["invoice", "payroll", "kubernetes", "changelog", "recipe", "crossword", "telescope",
          "aquarium", "origami", "beekeeping"]


def _skills(root: Path) -> Path:
    for t in TOPICS:
        d = root / "skills" / f"{t}-workflow-assistant-for-teams"
        d.mkdir(parents=True)
        d.joinpath("SKILL.md").write_text(
            f"---\nname: {t}-workflow-assistant-for-teams\ndescription: Handles {t} tasks, "
            f"plans, checks and writes {t} files. Use when the user mentions {t}.\n---\n\nDo {t}.\n")
    return root / "skills"


def test_ten_skills_in_80_columns_use_keys_and_every_line_fits(skilleval_cli, tmp_path: Path) -> None:
    folder = _skills(tmp_path)
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"query": f"help me with my {t} files, plan and check them",
                                  "expected_skill": f"{t}-workflow-assistant-for-teams"} for t in TOPICS]
                                + [{"query": "what is the capital of Australia?", "expected_skill": None}]))
    r = skilleval_cli.run("+experiment=routing", f"skills={folder}", f"cases={cases}",
                          "progress=false", "trigger.runs=1", env={"COLUMNS": "80"}, check=0)
    lines = r.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80, "\n".join(ln for ln in lines if len(ln) > 80)
    [res_path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(res_path.read_text())
    names = res["skills"]
    header = next(ln for ln in lines if re.match(r"\s*expected\s+1\s+2\s", ln))
    assert header.split()[1:] == [str(i) for i in range(1, 11)] + ["none", "other", "error"]
    for i, name in enumerate(names, 1):  # each row: its key, its (shortened) name, its counts
        row = next(ln for ln in lines if re.match(rf"\s*{i} {name[:6]}", ln))
        assert [int(x) for x in row.split()[-13:]] == [res["matrix"][name][c] for c in res["columns"]]
        # the legend: the per-skill table names every key in full
        # (a long name may be folded over lines: its pieces, in order, in the skill column)
        start = next(j for j, ln in enumerate(lines) if re.match(rf"│\s+{i} │", ln))
        cell = [lines[start].split("│")[2].strip()]
        for ln in lines[start + 1:]:
            parts = ln.split("│")
            if len(parts) < 3 or parts[1].strip():
                break
            cell.append(parts[2].strip())
        assert "".join(cell) == name, (name, cell)


def _m(skills: list[str]) -> dict:
    cols = [*skills, "none", "other", "error"]
    matrix = {e: {c: (3 if c == e else 0) for c in cols} for e in [*skills, "none"]}
    est = {"value": 1.0, "low": 0.5, "high": 1.0, "k": 3, "n": 3}
    return {"skills": skills, "columns": cols, "matrix": matrix,
            "per_skill": {s: {"precision": est, "recall": est} for s in skills}}


def _render(m: dict, width: int) -> tuple[str, str]:
    console = Console(width=width, record=True, force_terminal=False, color_system=None)
    layout, _ = matrix_table(m, console)
    print_tables(m, 0.95, console)
    return layout, console.export_text()


def test_few_skills_keep_the_full_grid_and_too_many_become_a_cell_list() -> None:
    assert _render(_m(["a-skill", "b-skill"]), 80)[0] == "full"
    layout, text = _render(_m([f"skill-number-{i:02d}-with-a-long-name" for i in range(30)]), 80)
    assert layout == "cells" and max(map(len, text.splitlines())) <= 80
    # every non-zero cell is one line: expected, fired, trials
    assert len(re.findall(r"skill-number-\d\d-with-a-long-name\s+skill-number-\d\d", text)) == 30


def test_hostile_names_are_escaped_in_every_layout() -> None:
    evil = ["[red]x[/red]\x1b[2J-skill", "[link=file:///etc/passwd]y[/link]"]
    for width, skills in ((200, evil), (80, evil + [f"s{i}-" + "n" * 12 for i in range(9)]),
                          (40, evil + [f"s{i}-" + "n" * 30 for i in range(20)])):
        layout, text = _render(_m(skills), width)
        assert "\x1b" not in text and "\\x1b" in text, layout
        assert "[red]" in text or layout == "keyed" and "[re" in text, layout
