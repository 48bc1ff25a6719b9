"""Items 4 and 5: rich markup and control sequences in data (queries, a hostile model's skill
names, stored text) are shown escaped, never executed; the run completes and writes results."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_files import EMOJI, ESC, HOSTILE_TEXTS, write_skill

# Markers of executed sequences: a live OSC 8 hyperlink, a screen clear, an OSC title, a bidi flip.
EXECUTED = [f"{ESC}]8;", f"{ESC}[2J", f"{ESC}]0;", "\u202e", "\x07"]


def _tty_env() -> dict[str, str]:
    """Make rich believe it writes to a terminal (colours and hyperlinks on)."""
    return {"FORCE_COLOR": "1", "NO_COLOR": "", "TERM": "xterm-256color"}


def _assert_nothing_executed(text: str) -> None:
    for marker in EXECUTED:
        assert marker not in text, f"{marker!r} reached the terminal"
    assert "MarkupError" not in text and "Traceback" not in text


@pytest.fixture(scope="module")
def hostile_run(make_skilleval_cli, tmp_path_factory):  # noqa: ANN001, ANN201
    root = tmp_path_factory.mktemp("terminal")
    cli = make_skilleval_cli(root)
    queries = [(t, i % 2 == 0) for i, t in enumerate(HOSTILE_TEXTS)] + [("tidy my csv file", True)]
    skill = write_skill(root / "skills", "csv-helper", "csv-helper",
                        description="Tidy CSV files [/] [link=file:///etc/passwd]x[/link]", queries=queries)
    proc = cli.run("+experiment=trigger_eval", "backend=stub", f"skill={skill}", "trigger.runs=2",
                   env=_tty_env())
    return cli, proc


def test_trigger_eval_with_hostile_queries_completes(hostile_run) -> None:
    cli, proc = hostile_run
    assert proc.returncode == 0, proc.stderr
    _assert_nothing_executed(proc.stdout + proc.stderr)
    assert "[link=file:///etc/passwd]" in proc.stdout.replace("\n", "") or "link=file" in proc.stdout
    assert "\\x1b[2J" in proc.stdout  # shown, as text
    # emoji codes in data are text too (root:x:0:0 was shown as root\u274c0:0)
    assert ":x:" in proc.stdout and not any(e in proc.stdout + proc.stderr for e in EMOJI)
    result = json.loads(cli.results()[-1].read_text())
    assert [r["query"] for r in result["results"]][:len(HOSTILE_TEXTS)] == HOSTILE_TEXTS


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_sql_shows_stored_hostile_text_escaped(hostile_run, fmt: str) -> None:
    cli, _ = hostile_run
    r = cli.run("sql", "select query, description as \"[/]col\" from trials", "--format", fmt,
                env=_tty_env())
    assert r.returncode == 0, r.stderr
    if fmt == "table":
        _assert_nothing_executed(r.stdout + r.stderr)
        assert "\\x1b" in r.stdout and "[/]" in r.stdout
        assert ":warning:" in r.stdout and not any(e in r.stdout for e in EMOJI)
    elif fmt == "json":  # JSON escapes control characters itself; it is data for programs
        assert ESC not in r.stdout and json.loads(r.stdout)


def test_hostile_model_skill_names_are_shown_escaped(make_skilleval_cli, tmp_path: Path, sim) -> None:
    cli = make_skilleval_cli(tmp_path)
    sim.configure(hostile_skill_name=f"[/]evil{ESC}[2J[link=file:///etc/passwd]x[/link]")
    skill = write_skill(tmp_path / "skills", "csv-helper", "csv-helper",
                        queries=[("tidy my csv file please", True), ("weather today?", False)])
    base = ("+experiment=trigger_eval", "backend=anthropic_api", f"backend.base_url={sim.url}",
            f"skill={skill}", "trigger.runs=1")
    checked = cli.run(*base, env=_tty_env())  # the self-check sees the wrong name fire: exit 3
    assert checked.returncode == 3 and "self-check failed" in checked.stderr
    _assert_nothing_executed(checked.stdout + checked.stderr)
    assert "\\x1b[2J" in checked.stderr
    proc = cli.run(*base, "trigger.self_check=false", env=_tty_env())
    assert proc.returncode == 0, proc.stderr
    _assert_nothing_executed(proc.stdout + proc.stderr)
    assert "evil" in proc.stdout  # the "fired instead" column
    r = cli.run("sql", "select fired from trials where fired is not null", env=_tty_env(), check=0)
    _assert_nothing_executed(r.stdout + r.stderr)


def test_error_lines_show_control_characters(skilleval_cli, tmp_path: Path) -> None:
    p = tmp_path / f"no{ESC}[2Jskill"
    r = skilleval_cli.run("validate", str(p))
    assert r.returncode == 2 and ESC not in r.stderr and "\\x1b[2J" in r.stderr


def test_every_console_of_the_command_line_prints_emoji_codes_as_text() -> None:
    """A rich Console made directly turns ':x:' in data into an emoji; each one is a
    `terminal.PlainConsole` (or its RunConsole) instead."""
    import re

    root = Path(__file__).resolve().parents[2] / "skilleval"
    direct = [f"{p.relative_to(root)}:{n}" for p in root.rglob("*.py") if "sim" not in p.parts
              for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
              if re.search(r"(?<![A-Za-z_.])Console\(", line) and "class " not in line]
    assert direct == []
