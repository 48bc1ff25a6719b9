"""A hostile model (serve-sim's `hostile_tool_calls` knob) against the API executor's sandbox,
and item 9's small leaks: tool errors never show the host's sandbox path; `package` says
when a file it ships is hard-linked (its content may be shared with a file outside)."""
from __future__ import annotations

import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"


def test_hostile_tool_calls_stay_in_the_sandbox_and_leak_no_host_path(make_skilleval_cli, tmp_path: Path,
                                                                      sim, canary) -> None:
    cli = make_skilleval_cli(tmp_path)
    secret = canary.root / "secret.txt"
    calls = [
        {"name": "write_file", "input": {"path": "outputs", "content": "x"}},  # a folder: OSError
        {"name": "read_file", "input": {"path": "../../../../../../canary/secret.txt"}},
        {"name": "read_file", "input": {"path": str(secret)}},
        {"name": "write_file", "input": {"path": str(canary.root / "notes" / "keep.md"), "content": "pwned"}},
        {"name": "write_file", "input": {"path": "../../../../../canary/new.txt", "content": "pwned"}},
        {"name": "list_files", "input": {"path": "../../.."}},
        {"name": "load_skill", "input": {"name": "../../../canary/other-skill"}},
        {"name": "read_file", "input": {"path": "\x1b[2J[/]evil"}},
    ]
    sim.configure(hostile_tool_calls=calls)
    r = cli.run("+experiment=functional_eval", "backend=anthropic_api", f"backend.base_url={sim.url}",
                "functional.runs=1", "functional.only=[2]", "functional.bootstrap=50",
                "functional.analyze=false", timeout=300)
    # the hostile model only makes hostile calls, so no arm writes an output: not measured (3)
    assert r.returncode == 3 and "no arm wrote any output" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "\x1b[2J" not in r.stdout + r.stderr
    rows = json.loads(cli.run("sql", "select transcript, errors from executions", "--format", "json",
                              check=0).stdout)
    text = "\n".join(row["transcript"] for row in rows)
    assert "refused" in text and "IsADirectoryError" in text  # the hostile calls really ran
    assert str(cli.outputs) not in text and str(cli.outputs.resolve()) not in text
    assert "CANARY-SECRET" not in text
    canary.assert_untouched()


def test_package_names_hard_linked_files(skilleval_cli, tmp_path: Path, canary) -> None:
    import shutil

    skill = tmp_path / "csv-tidy"
    shutil.copytree(CSV_TIDY, skill)
    (skill / "references").mkdir()
    os.link(canary.root / "secret.txt", skill / "references" / "notes.txt")
    r = skilleval_cli.run("package", str(skill), "-o", str(tmp_path / "dist"), check=0)
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1 and "references/notes.txt" in notes[0] and "2 hard links" in notes[0]
    canary.assert_untouched()
