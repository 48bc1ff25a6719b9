"""SKILL.md parsing, validation, write-back and packaging, on real files."""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from skilleval.errors import UserError
from skilleval.packaging import package_skill
from skilleval.skills import load_skill, validate_skill, write_description
from spine_helpers import write_skill


# -- parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize("yaml_desc, expected", [
    ("description: >\n  Tidy messy CSV files.\n  Use when a csv export needs cleaning.\n",
     "Tidy messy CSV files. Use when a csv export needs cleaning."),
    ("description: >-\n  First line\n  second line\n",
     "First line second line"),
    ("description: |\n  Line one: tidy.\n  Line two: dedupe.\n",
     "Line one: tidy.\nLine two: dedupe."),
    ("description: Implicit plain scalar\n  continued on the next line\n  and a third.\n",
     "Implicit plain scalar continued on the next line and a third."),
    ('description: "Use when: the user says \\"clean\\" # not a comment"\n',
     'Use when: the user says "clean" # not a comment'),
    ("description: 'It''s for CSV files: all of them'\n",
     "It's for CSV files: all of them"),
])
def test_multiline_and_quoted_descriptions_parse_fully(tmp_path: Path, yaml_desc: str, expected: str) -> None:
    d = write_skill(tmp_path, "csv-tidy", frontmatter=f"name: csv-tidy\n{yaml_desc}license: MIT\n")
    skill = load_skill(d)
    assert skill.description == expected
    assert skill.name == "csv-tidy"
    assert skill.frontmatter["license"] == "MIT"
    assert skill.body == "# Body\n\nDo it.\n"
    assert [p for p in validate_skill(d) if p.level == "error"] == []


# -- validation ----------------------------------------------------------------------------


def _errors(d: Path) -> list[str]:
    return [p.message for p in validate_skill(d) if p.level == "error"]


def _warnings(d: Path) -> list[str]:
    return [p.message for p in validate_skill(d) if p.level == "warning"]


@pytest.mark.parametrize("name, folder, description, extra, fragment", [
    ("Csv-Tidy", "Csv-Tidy", "ok", "", "kebab-case"),
    ("csv--tidy", "csv--tidy", "ok", "", "kebab-case"),
    ("csv_tidy", "csv_tidy", "ok", "", "kebab-case"),
    ("-csv", "-csv", "ok", "", "kebab-case"),
    ("a" * 65, "a" * 65, "ok", "", "at most 64"),
    ("csv-tidy", "other-folder", "ok", "", "does not match the folder name 'other-folder'"),
    ("csv-tidy", "csv-tidy", "", "", "'description' is empty"),
    ("csv-tidy", "csv-tidy", "x" * 1025, "", "at most 1024"),
    ("csv-tidy", "csv-tidy", "Use for <csv> files", "", "'<' or '>'"),
    ("csv-tidy", "csv-tidy", "Use for a -> b", "", "'<' or '>'"),
    ("csv-tidy", "csv-tidy", "ok", "colour: blue\n", "unexpected key 'colour'"),
])
def test_validate_rules_fail(tmp_path: Path, name: str, folder: str, description: str, extra: str,
                             fragment: str) -> None:
    fm = f"name: {name}\ndescription: {json.dumps(description)}\n{extra}"
    d = write_skill(tmp_path, name, frontmatter=fm, folder=folder)
    errors = _errors(d)
    assert any(fragment in e for e in errors), errors


@pytest.mark.parametrize("name, description", [
    ("a" * 64, "x"),
    ("csv-tidy2", "x" * 1024),
    ("a1-b2-c3", "Tidy CSV files (not XLSX): dedupe, rename; fix quoting."),
])
def test_validate_rules_pass_at_the_limits(tmp_path: Path, name: str, description: str) -> None:
    d = write_skill(tmp_path, name, description)
    assert _errors(d) == []


def test_claude_code_keys_warn_not_fail(tmp_path: Path) -> None:
    d = write_skill(tmp_path, "csv-tidy", frontmatter=(
        "name: csv-tidy\ndescription: Tidy CSV files.\nargument-hint: '[file]'\nversion: 1.2.0\n"
        "license: MIT\nallowed-tools: Bash\nmetadata:\n  author: me\ncompatibility: any\n"))
    assert _errors(d) == []
    warnings = _warnings(d)
    assert len(warnings) == 2
    assert any("'argument-hint'" in w for w in warnings)
    assert any("'version'" in w for w in warnings)


def test_a_body_past_500_lines_warns_not_fails(tmp_path: Path) -> None:
    """skill-creator: the body loads whole on every trigger, ideally under 500 lines; a 200,000
    line SKILL.md validated with no word."""
    ok = write_skill(tmp_path, "short-body", body="line\n" * 500)
    assert _warnings(ok) == []
    d = write_skill(tmp_path, "long-body", body="line\n" * 501)
    assert _errors(d) == []
    assert [w for w in _warnings(d) if "501 lines" in w and "under 500" in w], _warnings(d)


def test_validate_cli_exit_codes(tmp_path: Path, skilleval_cli) -> None:
    good = write_skill(tmp_path, "good-skill", "Tidy CSV files.")
    warned = write_skill(tmp_path, "warned-skill", frontmatter=(
        "name: warned-skill\ndescription: Tidy CSV files.\nargument-hint: '[file]'\n"))
    bad = write_skill(tmp_path, "bad-skill", frontmatter="name: Bad_Skill\ndescription: Tidy <b>CSV</b>.\n")

    r = skilleval_cli.run("validate", str(good), check=0)
    assert "Skill is valid!" in r.stdout
    r = skilleval_cli.run("validate", str(warned), check=0)
    assert "warning:" in r.stderr and "argument-hint" in r.stderr
    r = skilleval_cli.run("validate", str(bad), check=2)  # bad input (documented 0/2/3)
    assert "error:" in r.stderr and "kebab-case" in r.stderr and "'<' or '>'" in r.stderr
    # one line per problem, each saying where
    assert all(line.startswith(f"error: {bad / 'SKILL.md'}: ") for line in r.stderr.splitlines())
    assert "Skill is valid!" not in r.stdout
    r = skilleval_cli.run("validate", str(tmp_path / "nope"), check=2)
    assert "nope" in r.stderr and "Traceback" not in r.stderr
    # a problem of one of the folder's files names that file once ("x/SKILL.md: x/SKILL.md: ...")
    linked = write_skill(tmp_path, "linked-skill", "Tidy CSV files.")
    (linked / "notes.md").symlink_to(tmp_path / "good-skill" / "SKILL.md")
    r = skilleval_cli.run("validate", str(linked), check=2)
    assert r.stderr.strip() == f"error: {linked / 'notes.md'}: symlink points outside the skill folder", r.stderr


# -- writing a description back ---------------------------------------------------------------


ORIGINAL_FM = (
    "name: csv-tidy\n"
    "description: >\n  Old folded\n  description.\n"
    "license: MIT\n"
    "metadata:\n  author: someone\n  tags: [a, b]\n"
    "allowed-tools: Bash\n"
)
# Trailing spaces, a CRLF line, unicode, no final newline, and a '---' line inside the body.
ORIGINAL_BODY = "# Title\r\n\nline with trailing spaces   \n---\nunicode é ✓\n\n\nno final newline"


def test_write_description_keeps_keys_and_body_byte_for_byte(tmp_path: Path) -> None:
    d = tmp_path / "csv-tidy"
    d.mkdir()
    md = d / "SKILL.md"
    original = f"---\n{ORIGINAL_FM}---\n{ORIGINAL_BODY}".encode()
    md.write_bytes(original)
    before = load_skill(d)

    new = 'Tidy CSV files: dedupe, "normalise" headers # keep this. Use for csv exports, not xlsx.'
    backup = write_description(d, new, backup_dir=tmp_path / "backups")

    data = md.read_bytes()
    assert data.endswith(ORIGINAL_BODY.encode()), "body must be kept byte for byte"
    assert backup.exists() and backup.read_bytes() == original
    assert backup.name.startswith("SKILL.md.bak-")
    assert backup.parent == tmp_path / "backups" and not list(d.glob("SKILL.md.bak-*"))
    after = load_skill(d)
    assert after.description == new
    assert list(after.frontmatter) == list(before.frontmatter)  # key order kept
    for key in before.frontmatter:
        if key != "description":
            assert after.frontmatter[key] == before.frontmatter[key]
    assert [p for p in validate_skill(d) if p.level == "error"] == []


HAND_WRITTEN = (
    "name: csv-tidy\n"
    "# a comment the author keeps\n"
    "description: >-\n  Old description\n  over two lines.\n"
    "metadata:\n  version: 1.10\n  zip: 012345\n  flag: no   # trailing comment\n"
    "license: 'MIT'\n"
)


@pytest.mark.parametrize("description", ["New: one line, with a colon # and a hash.", "Two\nlines."])
def test_write_description_changes_nothing_but_the_description(tmp_path: Path, description: str) -> None:
    """The frontmatter was loaded and dumped again (PyYAML, YAML 1.1): comments went,
    version 1.10 became 1.1, zip 012345 the octal 5349, flag: no became false."""
    d = tmp_path / "csv-tidy"
    d.mkdir()
    (d / "SKILL.md").write_bytes(f"---\n{HAND_WRITTEN}---\n# Body\n".encode())
    write_description(d, description, backup_dir=tmp_path / "bk")
    text = (d / "SKILL.md").read_text()
    assert load_skill(d).description == description
    old_span = "description: >-\n  Old description\n  over two lines.\n"
    assert text.replace(text[text.index("description:"):text.index("metadata:")], old_span) == \
        f"---\n{HAND_WRITTEN}---\n# Body\n", text


def test_a_candidate_installs_with_only_its_description_changed(tmp_path: Path) -> None:
    """What Claude sees for a candidate description is the user's SKILL.md with that one value
    replaced, not a re-rendered frontmatter."""
    from skilleval.skill_install import install_skill

    d = tmp_path / "csv-tidy"
    d.mkdir()
    (d / "SKILL.md").write_bytes(f"---\n{HAND_WRITTEN}---\n# Body\n".encode())
    install_skill(load_skill(d).with_description("Candidate wording."), tmp_path / "trial")
    text = (tmp_path / "trial" / "SKILL.md").read_text()
    assert "# a comment the author keeps" in text and "version: 1.10" in text and "zip: 012345" in text
    assert "flag: no   # trailing comment" in text and load_skill(tmp_path / "trial").description == "Candidate wording."


def test_an_install_after_the_user_edits_skill_md_has_the_edit(tmp_path: Path) -> None:
    """Installs reuse what they parsed of a SKILL.md (a trial installs every listed skill);
    a file edited since, even to the same length, is read again."""
    from skilleval.skill_install import install_skill

    d = write_skill(tmp_path, "csv-tidy", "Original description.")
    for n, wording in enumerate(("Original description.", "Changed description..", "Candidate text.")):
        if n == 1:
            md = d / "SKILL.md"
            md.write_text(md.read_text().replace("Original description.", wording))
        skill = load_skill(d) if n < 2 else load_skill(d).with_description(wording)
        install_skill(skill, tmp_path / f"trial{n}")
        assert load_skill(tmp_path / f"trial{n}").description == wording
    assert (tmp_path / "trial1" / "SKILL.md").read_bytes() == (d / "SKILL.md").read_bytes()


def test_validate_refuses_control_characters_in_the_description(tmp_path: Path) -> None:
    """validate said "Skill is valid!" of a description holding ESC[31m, which description=
    and a proposer's candidate are refused for."""
    d = write_skill(tmp_path, "ansi", frontmatter='name: ansi\ndescription: "Tide \\e[31mred\\e[0m planner"\n')
    errors = [p.message for p in validate_skill(d) if p.level == "error"]
    assert errors == ["description contains control characters (\\x1b)"], errors


def test_an_installed_skill_keeps_its_scripts_executable(tmp_path: Path) -> None:
    """The trial folder's copy of scripts/helper.py lost its executable bit, so a skill telling
    Claude to run it got 'permission denied'; the bit also counts in resources_hash."""
    from skilleval.skill_install import install_skill

    d = write_skill(tmp_path, "csv-tidy", "Original description.")
    (d / "scripts").mkdir()
    script = d / "scripts" / "helper.py"
    script.write_text("print(1)\n")
    plain = load_skill(d).resources_hash
    script.chmod(0o755)
    skill = load_skill(d)
    assert skill.resources_hash != plain
    install_skill(skill, tmp_path / "trial")
    assert (tmp_path / "trial" / "scripts" / "helper.py").stat().st_mode & 0o111 == 0o111


def test_write_description_twice_keeps_the_original_backup(tmp_path: Path) -> None:
    d = write_skill(tmp_path, "csv-tidy", "Original description.")
    original = (d / "SKILL.md").read_bytes()
    b1 = write_description(d, "Second description.", backup_dir=tmp_path / "bk")
    b2 = write_description(d, "Third description.", backup_dir=tmp_path / "bk")  # same second, very likely
    assert b1 != b2
    backups = {p.read_bytes() for p in (tmp_path / "bk").glob("SKILL.md.bak-*")}
    assert original in backups
    assert load_skill(d).description == "Third description."


def test_write_description_refuses_a_backup_inside_the_skill_folder(tmp_path: Path) -> None:
    d = write_skill(tmp_path, "csv-tidy", "Original description.")
    original = (d / "SKILL.md").read_bytes()
    with pytest.raises(ValueError, match="inside the skill folder"):
        write_description(d, "New.", backup_dir=d / "backups")
    assert (d / "SKILL.md").read_bytes() == original


# -- packaging ------------------------------------------------------------------------------


def _populate(root: Path) -> Path:
    d = write_skill(root, "my-skill", "Tidy CSV files. Use when a csv export is messy.")
    files = {
        "scripts/run.py": "print('run')\n",
        "scripts/evals/check.py": "print('nested evals are kept')\n",
        "references/guide.md": "# guide\n",
        "evals/evals.json": "[]\n",
        "evals/files/a.csv": "a,b\n",
        ".env": "SECRET=1\n",
        ".hidden": "x\n",
        ".git/config": "[core]\n",
        "__pycache__/x.cpython-311.pyc": "\0",
        "scripts/__pycache__/run.cpython-311.pyc": "\0",
        "references/.DS_Store": "\0",
    }
    for rel, text in files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return d


def test_package_contents_are_rooted_and_filtered(tmp_path: Path) -> None:
    d = _populate(tmp_path / "src")
    out = package_skill(d, tmp_path / "dist")
    assert out == tmp_path / "dist" / "my-skill.skill"
    with zipfile.ZipFile(out) as zf:
        names = sorted(zf.namelist())
        assert names == sorted([
            "my-skill/SKILL.md", "my-skill/scripts/run.py", "my-skill/scripts/evals/check.py",
            "my-skill/references/guide.md",
        ])
        assert zf.read("my-skill/SKILL.md") == (d / "SKILL.md").read_bytes()
        assert zf.testzip() is None


def test_package_keeps_scripts_executable_and_a_failed_write_leaves_the_old_archive(tmp_path: Path,
                                                                                     monkeypatch) -> None:  # noqa: ANN001
    """Every entry was 0o644 (a script the skill runs lost its bit); the archive was written in
    place, so an interrupted package left a broken zip where the good one had been."""
    d = _populate(tmp_path / "src")
    (d / "scripts" / "run.py").chmod(0o755)
    out = package_skill(d, tmp_path / "dist")
    # the archive itself is readable as any new file (a temporary file is created 0600)
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask
    with zipfile.ZipFile(out) as zf:
        assert zf.getinfo("my-skill/scripts/run.py").external_attr >> 16 == 0o755
        assert zf.getinfo("my-skill/SKILL.md").external_attr >> 16 == 0o644
    good = out.read_bytes()
    import shutil as _shutil

    def boom(*a, **k):  # noqa: ANN002, ANN003, ANN202
        raise KeyboardInterrupt
    monkeypatch.setattr(_shutil, "copyfileobj", boom)
    with pytest.raises(KeyboardInterrupt):
        package_skill(d, tmp_path / "dist")
    assert out.read_bytes() == good and sorted(p.name for p in (tmp_path / "dist").iterdir()) == ["my-skill.skill"]


def test_a_run_from_inside_the_skill_folder_is_not_part_of_the_skill(tmp_path: Path, skilleval_cli) -> None:
    """Run from inside the skill folder, a run's outputs/ counted as the skill's files: its
    resources_hash changed, every rerun paid for every trial again, and package shipped them."""
    import json as _json
    import shutil

    d = tmp_path / "csv-tidy"
    shutil.copytree(Path(__file__).resolve().parents[2] / "experiments" / "csv-tidy", d)
    import subprocess
    import sys

    for _ in range(2):  # from inside the folder, as a user in their skill's folder would
        r = subprocess.run([sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval", "skill=.",
                            "trigger.runs=1", "progress=false"], cwd=d,
                           env={k: v for k, v in skilleval_cli.env.items() if k != "SKILLEVAL_OUTPUTS"},
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
    assert (d / "outputs").is_dir()
    rows = _json.loads(skilleval_cli.run("sql", "select calls_made, calls_cached from runs order by ts",
                                         "--format", "json", check=0).stdout)
    assert rows[1] == {"calls_made": 0, "calls_cached": rows[0]["calls_made"]}, rows
    with zipfile.ZipFile(package_skill(d, tmp_path / "dist")) as zf:
        assert not any("/outputs/" in n for n in zf.namelist()), zf.namelist()


def test_package_is_deterministic(tmp_path: Path, skilleval_cli) -> None:
    d = _populate(tmp_path / "src")
    first = package_skill(d, tmp_path / "one").read_bytes()
    # Touch every file with another mtime: the archive must not change.
    for p in d.rglob("*"):
        os.utime(p, (1_000_000_000, 1_500_000_000))
    second = package_skill(d, tmp_path / "two").read_bytes()
    assert first == second
    r = skilleval_cli.run("package", str(d), "-o", str(tmp_path / "three"), check=0)
    third = tmp_path / "three" / "my-skill.skill"
    assert str(third) in r.stdout
    assert third.read_bytes() == first


def test_package_refuses_an_invalid_skill(tmp_path: Path, skilleval_cli) -> None:
    d = write_skill(tmp_path, "bad", frontmatter="name: Bad_Name\ndescription: x\n", folder="bad")
    with pytest.raises(UserError, match="kebab-case"):
        package_skill(d, tmp_path / "dist")
    r = skilleval_cli.run("package", str(d), "-o", str(tmp_path / "dist"), check=2)
    assert "Traceback" not in r.stderr and "kebab-case" in r.stderr
    assert not (tmp_path / "dist" / "bad.skill").exists()


def test_package_prints_a_hostile_folder_name_visibly(tmp_path: Path, skilleval_cli) -> None:
    """The archive's path went to the terminal raw: a folder named with ESC[31m and an OSC
    title sequence recoloured and retitled it."""
    d = _populate(tmp_path / "hp\x1b[31m\x1b]0;T\x07")
    r = skilleval_cli.run("package", str(d), "-o", str(d.parent / "out"), check=0)
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout and "\\x1b[31m" in r.stdout, repr(r.stdout)
