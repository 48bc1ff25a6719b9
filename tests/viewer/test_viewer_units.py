"""Fast checks of the viewer's parts: excerpts, containment, feedback.json, script JSON."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skilleval.excerpt import MAX_CHARS, excerpt_of_blocks, make_excerpt
from skilleval.viewer import feedback
from skilleval.viewer.files import Refused, contained, describe, tree
from skilleval.viewer.render import script_json, static_page


def test_excerpt_is_bounded_and_secret_free(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s3cr3t-value-from-env-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    text = make_excerpt(["I will use the key " + secret, "sk-ant-api03-ABCDEFGHIJKLMNOP", "x" * 5000])
    assert text is not None and len(text) <= MAX_CHARS
    assert secret not in text and "sk-ant-api03-ABC" not in text and "[redacted]" in text
    # a key cut at the boundary leaks nothing either: redaction happens before truncation
    cut = make_excerpt(["y" * (MAX_CHARS - 12) + " sk-ant-api03-" + "Q" * 40])
    assert "sk-ant" not in cut and "QQQQ" not in cut
    assert make_excerpt(["a\x1b[31mb\x00c\u202e"]) == "a [31mb c"
    assert make_excerpt([]) is None
    got = excerpt_of_blocks([{"type": "text", "text": "Let me look."},
                             {"type": "tool_use", "name": "Skill", "input": {"skill": "csv-tidy"}}])
    assert got == 'Let me look. | → Skill({"skill": "csv-tidy"})'


def test_trials_keep_an_excerpt(default_trigger_run) -> None:  # noqa: ANN001
    rows = json.loads(default_trigger_run.cli.run("sql", "select outcome, fired, excerpt from trials",
                                                  "--format", "json", check=0).stdout)
    assert rows and all(r["excerpt"] and len(r["excerpt"]) <= MAX_CHARS for r in rows)
    fired = [r for r in rows if r["fired"]]
    assert all(r["fired"] in r["excerpt"] for r in fired)


def test_containment_refuses_traversal_absolute_and_outside_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "ok.txt").write_text("ok")
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", root / "a" / "out-link")
    os.symlink(root / "a" / "b" / "ok.txt", root / "a" / "in-link")
    assert contained([root], "a/b/ok.txt") == (root / "a" / "b" / "ok.txt").resolve()
    assert contained([root], "a/in-link").name == "ok.txt"
    for bad in ("../secret.txt", "a/../../secret.txt", "/etc/passwd", "a/out-link", "", "a/\x00b",
                "\\etc\\passwd", "a\\..\\..\\secret.txt"):
        with pytest.raises(Refused):
            contained([root], bad)
    assert tree(root / "a", [root]) == ["b/ok.txt", "in-link"]


def test_outputs_that_cannot_be_shown_are_listed_with_the_reason(tmp_path: Path) -> None:
    """A link out of the workspace, a link to nothing and a FIFO were dropped from the Outputs
    page with no word; a folder link out is one entry, its contents not walked."""
    from skilleval.viewer.files import listing

    root = tmp_path / "ws"
    (root / "out").mkdir(parents=True)
    (root / "out" / "ok.txt").write_text("ok")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "elsewhere" / "secret.txt", root / "out" / "leak")
    os.symlink(tmp_path / "elsewhere", root / "out" / "leak-dir")
    os.symlink(root / "out" / "gone.txt", root / "out" / "dangling")
    os.mkfifo(root / "out" / "pipe")
    got = dict(listing(root / "out", [root]))
    assert got["ok.txt"] is None and set(got) == {"ok.txt", "leak", "leak-dir", "dangling", "pipe"}
    assert "outside the recorded folders" in got["leak"] and "secret.txt" in got["leak"]
    assert "outside the recorded folders" in got["leak-dir"]
    assert "does not exist" in got["dangling"] and "not a regular file" in got["pipe"]
    assert tree(root / "out", [root]) == ["ok.txt"]


def test_an_output_named_with_a_colon_is_listed(tmp_path: Path) -> None:
    """A drive-letter rule hid "summary 10:30.txt" from the Outputs page and the report, with
    no word (a name an agent writes; on POSIX nothing but a name)."""
    (tmp_path / "sub").mkdir()
    for name in ("summary 10:30.txt", "C:x.txt", "sub/a:b.txt"):
        (tmp_path / name).write_text("x")
    assert tree(tmp_path, [tmp_path]) == ["C:x.txt", "sub/a:b.txt", "summary 10:30.txt"]
    assert contained([tmp_path], "summary 10:30.txt") == (tmp_path / "summary 10:30.txt").resolve()


@pytest.mark.parametrize("planted", [".feedback.json.lock", "feedback.json"])
def test_feedback_never_follows_a_planted_symlink(tmp_path: Path, planted: str) -> None:
    """A workspace is hostile: a save through a symlinked lock file created a file outside it
    (as root, anywhere), and a symlinked feedback.json was read and its reviews copied in."""
    ws, outside = tmp_path / "ws", tmp_path / "outside.json"
    ws.mkdir()
    if planted == "feedback.json":
        outside.write_text(json.dumps({"reviews": [{"run_id": "x", "feedback": "planted"}]}))
    os.symlink(outside, ws / planted)
    with pytest.raises(feedback.Unreadable, match="symlink"):
        feedback.save(ws, "eval-0-with_skill-run-1", "looks fine")
    assert outside.exists() == (planted == "feedback.json")
    assert not (ws / "feedback.json").is_file() or (ws / "feedback.json").is_symlink()


def test_describe_kinds(tmp_path: Path) -> None:
    (tmp_path / "t.tsv").write_text("a\tb\n1\t2\n")
    (tmp_path / "j.json").write_text('{"b":1,"a":"\u05e9"}')
    (tmp_path / "x.bin").write_bytes(b"\x00\x01")
    (tmp_path / "p.pdf").write_bytes(b"%PDF-1.4 not really")
    kinds = {p.name: describe(p, p.name, url=None, inline_binary=True) for p in tmp_path.iterdir()}
    assert kinds["t.tsv"]["kind"] == "table" and kinds["t.tsv"]["rows"] == [["a", "b"], ["1", "2"]]
    assert kinds["j.json"]["kind"] == "json" and "\u05e9" in kinds["j.json"]["text"]
    assert kinds["x.bin"]["kind"] == "binary" and kinds["x.bin"]["data_uri"].startswith("data:application/octet-stream")
    assert kinds["p.pdf"]["kind"] == "pdf"


def test_xlsx_renders_as_table(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl", reason="the xlsx extra is part of the test extra")
    wb = openpyxl.Workbook()
    wb.active.append(["name", "n"])
    wb.active.append(["<b>x</b>", 3])
    wb.save(tmp_path / "s.xlsx")
    d = describe(tmp_path / "s.xlsx", "s.xlsx", url=None, inline_binary=True)
    assert d["kind"] == "sheets" and d["sheets"][0]["rows"] == [["name", "n"], ["<b>x</b>", "3"]]


def test_feedback_json_in_skill_creator_format(tmp_path: Path) -> None:
    feedback.save(tmp_path, "eval-0-with_skill-run-1", "header row duplicated")
    feedback.save(tmp_path, "eval-0-without_skill-run-1", "")
    data = json.loads((tmp_path / "feedback.json").read_text())
    assert data["status"] == "in_progress"
    assert [r["run_id"] for r in data["reviews"]] == ["eval-0-with_skill-run-1"]
    assert data["reviews"][0]["timestamp"].endswith("Z")
    feedback.submit(tmp_path, ["eval-0-with_skill-run-1", "eval-0-without_skill-run-1"])
    data = json.loads((tmp_path / "feedback.json").read_text())
    assert data["status"] == "complete"
    assert [(r["run_id"], r["feedback"]) for r in data["reviews"]] == [
        ("eval-0-with_skill-run-1", "header row duplicated"), ("eval-0-without_skill-run-1", "")]


def test_saved_files_keep_their_mode_and_long_feedback_is_refused(tmp_path: Path) -> None:
    """mkstemp made every saved file 0600 (an eval set or feedback.json lost its read bits), and
    feedback past 20,000 characters was cut short with {"ok": true}."""
    import os
    import stat

    from skilleval.evalsets.evalset import write_rows

    fb = tmp_path / "feedback.json"
    fb.write_text('{"reviews": [], "status": "in_progress"}')
    os.chmod(fb, 0o644)
    feedback.save(tmp_path, "eval-0-with_skill-run-1", "ok")
    assert stat.S_IMODE(fb.stat().st_mode) == 0o644
    rows = tmp_path / "set.json"
    rows.write_text("[]")
    os.chmod(rows, 0o640)
    write_rows(rows, [{"query": "q", "should_trigger": True}])
    assert stat.S_IMODE(rows.stat().st_mode) == 0o640
    new = tmp_path / "new" / "set.json"
    write_rows(new, [{"query": "q", "should_trigger": True}])
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~umask
    with pytest.raises(ValueError, match="at most 20,000"):
        feedback.save(tmp_path, "eval-0-with_skill-run-1", "x" * 20_001)
    assert json.loads(fb.read_text())["reviews"][0]["feedback"] == "ok"


def test_script_json_cannot_close_its_block() -> None:
    text = str(script_json({"q": "</script><script>alert(1)</script>\u2028<!--", "n": float("nan")}))
    assert "<" not in text and ">" not in text and "\u2028" not in text
    assert json.loads(text) == {"q": "</script><script>alert(1)</script>\u2028<!--", "n": None}
    page = static_page({"responses": {}, "start": "#/runs"}, title="</title><script>x</script>", subtitle="s")
    assert "<script>x</script>" not in page and "&lt;/title&gt;" in page


def test_view_binds_loopback_only(tmp_path: Path) -> None:
    from skilleval.store.catalog import Store
    from skilleval.viewer.api import Api
    from skilleval.viewer.server import bind

    srv = bind(Api(Store(tmp_path)), 0)
    try:
        assert srv.server_address[0] == "127.0.0.1"
    finally:
        srv.server_close()


def test_real_backends_store_a_bounded_secret_free_excerpt(tmp_path: Path, sim) -> None:  # noqa: ANN001
    """The real SDK and the real claude CLI against serve-sim: every valid trial keeps an excerpt.
    (No self-check: its calls are not trials, and each one is another real CLI process.)"""
    import subprocess
    import sys

    from skilleval.sim.process import locate_claude_cli

    key = "sk-ant-api03-VIEWEREXCERPTKEY-0123456789abcdef"
    repo = Path(__file__).resolve().parents[2]
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"query": "dedupe the rows of this messy csv export", "should_trigger": True},
                                 {"query": "what is the capital of France", "should_trigger": False}]))
    backends = [["backend=anthropic_api"]]
    claude, _ = locate_claude_cli()
    if claude:
        backends.append(["backend=claude_cli", f"backend.executable={claude}"])
    for i, backend in enumerate(backends):
        store = tmp_path / f"store{i}"
        env = {**os.environ, "SKILLEVAL_STORE": str(store), "SKILLEVAL_OUTPUTS": str(tmp_path / f"out{i}"),
               "ANTHROPIC_API_KEY": key}
        proc = subprocess.run([sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval",
                               f"skill={repo / 'experiments/csv-tidy'}", f"cases={cases}", "backend.model=sim-1",
                               "trigger.runs=1", "trigger.self_check=false", "progress=false",
                               f"backend.base_url={sim.url}", *backend],
                              env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        from skilleval.store.catalog import Store

        rows = Store(store).query("select outcome, fired, excerpt from trials").to_pylist()
        valid = [r for r in rows if r["outcome"] in ("triggered", "not_triggered")]
        assert valid and all(r["excerpt"] and len(r["excerpt"]) <= 200 for r in valid), (backend, rows)
        assert all(key not in (r["excerpt"] or "") for r in rows)
        assert any(r["fired"] for r in valid), rows  # one trial each way (runs=1: an excerpt
        # is per trial, a second repeat would show nothing more)
        assert all("Skill" in r["excerpt"] for r in valid if r["fired"]), rows


def test_vendored_chart_js_is_the_pinned_file_with_its_licence() -> None:
    import hashlib

    from skilleval.viewer.render import CHART_JS_SHA256, STATIC

    data = (STATIC / "vendor" / "chart.umd.min.js").read_bytes()
    assert hashlib.sha256(data).hexdigest() == CHART_JS_SHA256
    assert "MIT" in (STATIC / "vendor" / "chart.js.LICENSE.md").read_text() or \
        "Permission is hereby granted" in (STATIC / "vendor" / "chart.js.LICENSE.md").read_text()


def test_previous_iteration_output_and_feedback_are_shown(skilleval_cli, tmp_path: Path) -> None:
    """Two functional runs into one workspace: iteration-2's page carries iteration-1's output
    and feedback for the same run folder (skill-creator §9.5, without losing current feedback)."""
    from skilleval.store.catalog import Store
    from skilleval.viewer.api import Api

    ws = tmp_path / "ws"
    args = ("+experiment=functional_eval", "functional.runs=1", "functional.analyze=false",
            "functional.only=[dedupe-contacts]", f"functional.workspace={ws}")
    skilleval_cli.run(*args, check=0, timeout=300)
    rid = "eval-dedupe-contacts-with_skill-run-1"
    feedback.save(ws / "iteration-1", rid, "first pass: header row duplicated")
    skilleval_cli.run(*args, check=0, timeout=300)
    feedback.save(ws / "iteration-2", rid, "second pass looks right")
    api = Api(Store(skilleval_cli.store))
    run2 = api.q.latest_run()
    page = api.page(run2, "functional", {})
    assert page["iteration"] == "iteration-2" and page["previous_iteration"] == "iteration-1"
    entry = next(r for e in page["evals"] for r in e["runs"] if r["review_id"] == rid)
    assert entry["feedback"] == "second pass looks right"
    assert entry["previous"]["feedback"] == "first pass: header row duplicated"
    assert any(f["kind"] == "table" for f in entry["previous"]["files"])
    assert all(f["url"].startswith("/api/file?") for f in entry["files"])
    # the file links resolve inside the recorded workspace, the previous iteration included
    for f in entry["previous"]["files"]:
        rel = f["url"].split("path=", 1)[1]
        import urllib.parse

        assert api.file(run2, urllib.parse.unquote(rel)).is_file()
