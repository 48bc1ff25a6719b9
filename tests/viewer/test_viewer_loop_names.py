"""Audit: every output file is viewable and downloadable, whatever its name.

A file whose name is not UTF-8 (a byte like 0xff, as a model's tool can write on Linux)
made `skilleval import` die with a traceback, and the viewer's outputs page of such a run
answer 500 (the name cannot be encoded): no output of the run could be seen."""
from __future__ import annotations

import json
import os
import signal
import urllib.request
from pathlib import Path

from tests.viewer.conftest import start_view

NAMES = [b"bad\xff.txt", b"a#b?c%d.txt", b"line\nbreak.txt", "ünï ✓.txt".encode(), b"nested/deeper/x.txt"]


def test_odd_names_import_show_and_download(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    run = tmp_path / "ws" / "iteration-1" / "eval-0-names" / "with_skill" / "run-1"
    out = run / "outputs"
    for i, n in enumerate(NAMES):
        path = os.path.join(os.fsencode(out), n)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(f"content {i}".encode())
    big = os.urandom(1 << 16) * 96  # 6 MB of binary output, sent in pieces
    (out / "big.bin").write_bytes(big)
    (run / "grading.json").write_text(json.dumps({"expectations": [{"text": "t", "passed": True, "evidence": ""}]}))
    p = skilleval_cli.run("import", str(tmp_path / "ws"), check=0)
    assert "Traceback" not in p.stderr
    vp = start_view(skilleval_cli.store, skilleval_cli.env)
    try:
        runs = json.loads(urllib.request.urlopen(vp.url + "api/runs", timeout=10).read())["rows"]
        rid = runs[0]["run_id"]
        page_json = json.loads(urllib.request.urlopen(vp.url + f"api/run/{rid}/functional", timeout=10).read())
        files = page_json["evals"][0]["runs"][0]["files"]
        shown = {f["name"]: f for f in files}
        assert set(shown) == {"bad\\xff.txt", "a#b?c%d.txt", "line\nbreak.txt", "ünï ✓.txt", "nested/deeper/x.txt",
                              "big.bin"}
        with urllib.request.urlopen(vp.url + shown["big.bin"]["url"].lstrip("/"), timeout=30) as r:
            assert r.headers["Content-Length"] == str(len(big)) and r.read() == big
            assert r.headers["Content-Disposition"].startswith("attachment")
            assert r.headers["Content-Security-Policy"].startswith("sandbox")
        for i, n in enumerate(NAMES):
            name = n.decode("utf-8", "backslashreplace")
            assert shown[name]["text"] == f"content {i}"
            with urllib.request.urlopen(vp.url + shown[name]["url"].lstrip("/"), timeout=10) as r:
                assert r.read() == f"content {i}".encode(), name
        pg = page.page
        pg.goto(vp.url + f"#/run/{rid}/outputs/0")
        pg.locator("main").get_by_text("bad\\xff.txt").first.wait_for(timeout=10_000)
        assert page.errors == []
    finally:
        os.kill(vp.proc.pid, signal.SIGTERM)
        vp.proc.wait(timeout=10)
