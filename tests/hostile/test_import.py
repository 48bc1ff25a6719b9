"""Item 2 and the import cases of item 8: `import` reads only regular files inside the
workspace (symlinks out are skipped and reported, never copied into blobs), and a malformed
grading.json / timing.json / eval_metadata.json is one line and exit 2."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from shared_helpers import one_line_error

GOOD = {"expectations": [{"text": "wrote it", "passed": True, "evidence": "file exists"}]}


def _run_dir(ws: Path) -> Path:
    d = ws / "eval-1" / "with_skill" / "run-1"
    (d / "outputs").mkdir(parents=True)
    (d / "outputs" / "result.txt").write_text("real output\n")
    return d


def test_import_skips_symlinks_out_of_the_workspace(skilleval_cli, tmp_path: Path, canary) -> None:
    ws = tmp_path / "ws"
    d = _run_dir(ws)
    (d / "grading.json").write_text(json.dumps(GOOD))
    (d / "outputs" / "leak.txt").symlink_to(canary.root / "secret.txt")
    (d / "outputs" / "leakdir").symlink_to(canary.root / "notes")
    (d / "outputs" / "hard.txt").write_text("inside\n")
    (d / "transcript.md").symlink_to(canary.root / "secret.txt")
    (d / "timing.json").symlink_to(canary.root / "secret.txt")
    os.mkfifo(d / "outputs" / "pipe")
    r = skilleval_cli.run("import", str(ws))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "skipped" in r.stderr and "leak.txt" in r.stderr and "transcript.md" in r.stderr
    for blob in (skilleval_cli.store / "blobs").rglob("*"):
        if blob.is_file():
            assert b"CANARY-SECRET" not in blob.read_bytes()
    rows = json.loads(skilleval_cli.run("sql", "select outputs, transcript from executions",
                                        "--format", "json", check=0).stdout)
    assert {o["path"] for o in rows[0]["outputs"]} == {"outputs/result.txt", "outputs/hard.txt"}
    assert "CANARY" not in json.dumps(rows)
    canary.assert_untouched()


MALFORMED = {
    "grading not JSON": ("grading.json", "{not json"),
    "grading a list": ("grading.json", "[1, 2]"),
    "grading a string": ("grading.json", '"hello"'),
    "grading non-UTF-8": ("grading.json", b'{"expectations": ["caf\xe9"]}'),
    "grading nested": ("grading.json", "[" * 50_000 + "]" * 50_000),
    "expectations a dict": ("grading.json", '{"expectations": {"text": "x"}}'),
    "execution_metrics a list": ("grading.json", '{"execution_metrics": [1]}'),
    "total_tool_calls text": ("grading.json", '{"execution_metrics": {"total_tool_calls": "abc"}}'),
    "tool_calls a list": ("grading.json", '{"execution_metrics": {"tool_calls": ["Read"]}}'),
    "timing a number": ("grading.json", '{"timing": 5}'),
    "duration text": ("grading.json", '{"timing": {"total_duration_seconds": "slow"}}'),
    "timing.json list": ("timing.json", "[]"),
    "total_tokens text": ("timing.json", '{"total_tokens": "many"}'),
    "total_tokens float": ("timing.json", '{"total_tokens": 1.5}'),
    "duration bool": ("timing.json", '{"total_duration_seconds": true}'),
    "metadata prompt list": ("eval_metadata.json", '{"prompt": ["a"]}'),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_workspace_records_are_one_line_exit_2(skilleval_cli, tmp_path: Path, case: str) -> None:
    name, content = MALFORMED[case]
    ws = tmp_path / "ws"
    d = _run_dir(ws)
    if name != "grading.json":
        (d / "grading.json").write_text(json.dumps(GOOD))
    target = d / name
    target.write_bytes(content if isinstance(content, bytes) else content.encode())
    r = skilleval_cli.run("import", str(ws))
    line = one_line_error(r, 2)
    assert name in line
    assert not (skilleval_cli.store / "executions").exists()


def test_a_run_folder_not_named_run_n_is_reported_not_dropped(skilleval_cli, tmp_path: Path) -> None:
    """eval-5/with_skill/run-a was read by no layout: the import said "imported 1 of 1 runs"
    and eval-5 appeared nowhere."""
    ws = tmp_path / "ws"
    (_run_dir(ws) / "grading.json").write_text(json.dumps(GOOD))
    odd = ws / "eval-5" / "with_skill" / "run-a"
    (odd / "outputs").mkdir(parents=True)
    (odd / "grading.json").write_text(json.dumps(GOOD))
    r = skilleval_cli.run("import", str(ws))
    assert r.returncode == 0, r.stderr
    assert "not named run-<number>" in r.stderr and "eval-5/with_skill/run-a" in r.stderr, r.stderr
