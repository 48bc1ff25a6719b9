"""review-evals in real Chromium: edit, toggle, delete, add, save, reload; hostile text stays
text; a bad save is refused; the backup lands outside the skill folder."""
from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from skilleval.evalsets.evalset import write_rows
from skilleval.evalsets.offline import draft_offline
from skilleval.skills import load_skill

REPO = Path(__file__).resolve().parents[2]
HOSTILE = '</script><img src=x onerror="window.__xss=1">'


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    root = tmp_path_factory.mktemp("review")
    skill_dir = root / "my-skill"
    shutil.copytree(REPO / "experiments" / "csv-tidy", skill_dir)
    shutil.rmtree(skill_dir / "evals")
    rows = draft_offline(load_skill(skill_dir), [], 8, 4)
    rows[3]["query"] = HOSTILE
    rows[3]["rationale"] = "<b>not bold</b>"
    set_path = skill_dir / "evals" / "trigger_eval.json"
    write_rows(set_path, rows)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLEVAL_")}
    env["SKILLEVAL_STORE"] = str(root / "store")
    proc = subprocess.Popen([sys.executable, "-m", "skilleval.cli", "review-evals", str(skill_dir), "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()
    try:
        first = lines.get(timeout=60)
    except queue.Empty:
        proc.kill()
        raise AssertionError("review-evals printed no URL within 60 s")
    assert " at http://127.0.0.1:" in first, first + proc.stderr.read()
    url = first.split(" at ", 1)[1].split()[0]
    try:
        yield url, set_path, root / "store"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def values(page) -> list[tuple[str, bool]]:  # noqa: ANN001
    qs = page.locator("textarea.query")
    boxes = page.locator("input.should-trigger")
    return [(qs.nth(i).input_value(), boxes.nth(i).is_checked()) for i in range(qs.count())]


def test_page_load_shows_no_console_error_and_asks_for_no_favicon(served, browser) -> None:  # noqa: ANN001
    """A favicon 404 (or a CSP refusal of the icon) is a console error in a real chromium."""
    url, _, _ = served
    page = browser.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    assert len(values(page)) >= 1
    page.wait_for_timeout(500)  # the favicon is fetched after load
    page.reload()
    page.wait_for_timeout(500)
    page.close()
    assert errors == []
    assert not [r for r in requests if "favicon" in r], requests


def test_edit_save_reload_shows_the_edits(served, browser) -> None:  # noqa: ANN001
    url, set_path, store = served
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    before = values(page)
    assert len(before) == 8 and sum(s for _, s in before) == 4
    assert (HOSTILE, False) in before or (HOSTILE, True) in before  # shown as text, not markup
    assert page.evaluate("window.__xss") is None
    assert page.get_by_text("<b>not bold</b>").count() == 1
    assert page.locator("#uncovered li").count() >= 1

    page.locator("textarea.query").nth(0).fill("edited: dedupe contacts.csv on email, keep newest")
    page.locator("input.should-trigger").nth(1).click()
    deleted = before[2][0]
    page.locator("button.delete").nth(2).click()
    page.locator("#add").click()
    page.keyboard.type("brand new: the vendor tsv has mojibake, fix it")  # the new row has focus
    page.locator("#save").click()
    expect(page.locator("#status")).to_have_text(re.compile(r"^Saved"))  # (the CSP forbids eval)
    assert "backup:" in page.locator("#status").text_content()

    page.reload()
    after = values(page)
    assert after[0] == ("edited: dedupe contacts.csv on email, keep newest", before[0][1])
    assert after[1] == (before[1][0], not before[1][1])
    assert deleted not in [q for q, _ in after]
    assert after[-1] == ("brand new: the vendor tsv has mojibake, fix it", True)
    assert len(after) == 8 and not errors

    saved = json.loads(set_path.read_text())
    assert [(r["query"], r["should_trigger"]) for r in saved] == after
    assert all(list(r)[:2] == ["query", "should_trigger"] for r in saved)
    backups = list((store / "_backups").rglob("*.json"))
    assert backups and all(set_path.parent.parent not in b.parents for b in backups)
    assert deleted in backups[0].read_text()  # the backup holds the set before the save


def test_invalid_edit_is_refused_and_nothing_is_written(served, browser) -> None:  # noqa: ANN001
    url, set_path, _ = served
    on_disk = set_path.read_bytes()
    page = browser.new_page()
    page.goto(url)
    first = page.locator("textarea.query").nth(0).input_value()
    page.locator("textarea.query").nth(1).fill(first)
    page.locator("#save").click()
    expect(page.locator("#status")).to_have_text(re.compile(r"^Not saved"))
    assert "duplicate query" in page.locator("#status").text_content()
    assert set_path.read_bytes() == on_disk


def test_writes_need_the_page_token_and_a_loopback_host(served) -> None:  # noqa: ANN001
    url, set_path, _ = served
    on_disk = set_path.read_bytes()
    r = httpx.post(url + "api/save", json={"rows": []})
    assert r.status_code == 403
    r = httpx.get(url, headers={"Host": "attacker.example"})
    assert r.status_code == 403
    page = httpx.get(url)
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "<script>" not in page.text.split('id="review-data">')[1].split("</script>")[0]
    assert set_path.read_bytes() == on_disk


def test_error_pages_http_server_writes_itself_carry_the_csp(served) -> None:  # noqa: ANN001
    """http.server's own error pages (an unknown method: 501) carried no CSP or nosniff."""
    from tests.shared_helpers import raw_request_headers

    url = served[0]
    host = url.split("//")[1].rstrip("/").encode()
    code, headers = raw_request_headers(url, b"PUT / HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
    assert code == 501
    assert "frame-ancestors 'none'" in headers.get("content-security-policy", ""), headers
    assert headers.get("x-content-type-options") == "nosniff", headers


def test_bad_request_bodies_get_a_400_line_not_a_traceback(served) -> None:  # noqa: ANN001
    """Content-Length "abc" dropped the connection with a traceback in the user's terminal,
    "-1" read until the client closed (past the size cap), a non-UTF-8 body was a traceback."""
    from tests.shared_helpers import raw_post

    url, set_path, _ = served
    on_disk = set_path.read_bytes()
    token = json.loads(httpx.get(url).text.split('id="review-data">')[1].split("</script>")[0])["token"]
    head = {"Host": url.split("//")[1].rstrip("/"), "Content-Type": "application/json",
            "X-Review-Token": token}
    for length, body, words in (("abc", b"{}", "whole number"), ("-1", b"{}", "whole number"),
                                (None, b'{"rows":[{"query":"\xff","should_trigger":true}]}', "not UTF-8")):
        status, text = raw_post(url, "/api/save", {**head, "Content-Length": length or str(len(body))}, body)
        assert status == 400 and words in json.loads(text)["error"], (length, status, text)
    # a save that carries another page's Origin is refused, token or not
    status, text = raw_post(url, "/api/save", {**head, "Origin": "http://evil.example", "Content-Length": "2"}, b"{}")
    assert status == 403 and "cross-origin" in text, (status, text)
    assert set_path.read_bytes() == on_disk


def test_review_bad_input_exits_2_before_serving(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    skill = tmp_path / "s"
    shutil.copytree(REPO / "experiments" / "csv-tidy", skill)
    shutil.rmtree(skill / "evals")
    proc = skilleval_cli.run("review-evals", str(skill), "--no-open", timeout=60)
    assert proc.returncode == 2 and "no eval set found" in proc.stderr
    (skill / "evals").mkdir()
    outside = tmp_path / "elsewhere.json"
    outside.write_text('[{"query": "q", "should_trigger": true}]')
    (skill / "evals" / "trigger_eval.json").symlink_to(outside)
    proc = skilleval_cli.run("review-evals", str(skill), "--no-open", timeout=60)
    assert proc.returncode == 2 and "resolves outside the skill folder" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_set_with_some_ids_loads_with_unique_ids_and_saves_unedited(tmp_path: Path) -> None:
    """Ids made from a row's index (q001 for row 1) repeated an id a row already had, so the
    set the page loaded could not be saved: "duplicate id 'q001'", on an id no one can edit."""
    from skilleval.evalsets.review import build_state

    set_path = tmp_path / "set.json"
    set_path.write_text(json.dumps([{"query": "dedupe this csv", "should_trigger": True, "id": "q001"},
                                    {"query": "write a poem", "should_trigger": False},
                                    {"query": "fix csv headers", "should_trigger": True}]))
    state = build_state(set_path, backup_dir=tmp_path / "backups")
    rows = state.load()
    assert len({r["id"] for r in rows}) == 3 and rows[0]["id"] == "q001", rows
    state.save(rows)
    assert [r["id"] for r in json.loads(set_path.read_text())] == [r["id"] for r in rows]


def test_a_row_added_after_a_delete_gets_a_new_id(tmp_path: Path) -> None:
    """Deleting q000 and adding a row saved the new query as q000: results keyed by case id
    (diff --sweep, the store's case_id) would pair two different queries."""
    from skilleval.evalsets.review import build_state

    set_path = tmp_path / "set.json"
    set_path.write_text(json.dumps([{"query": "dedupe this csv", "should_trigger": True},
                                    {"query": "write a poem", "should_trigger": False}]))
    state = build_state(set_path, backup_dir=tmp_path / "backups")
    rows = state.load()
    assert [r["id"] for r in rows] == ["q000", "q001"]
    state.save([rows[1], {"query": "trim csv whitespace", "should_trigger": True}])
    assert [r["id"] for r in json.loads(set_path.read_text())] == ["q001", "q002"]


def test_a_set_broken_on_disk_and_a_folder_to_save_to_are_said(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    """/api/set on a set edited into invalid JSON while the page was open dropped the
    connection (a traceback in the terminal); --save-to a folder was found at the first Save."""
    import threading
    import urllib.error
    import urllib.request
    from http.server import ThreadingHTTPServer

    from skilleval.evalsets.review import build_state, make_handler

    set_path = tmp_path / "set.json"
    set_path.write_text(json.dumps([{"query": "dedupe this csv", "should_trigger": True},
                                    {"query": "write a poem", "should_trigger": False}]))
    state = build_state(set_path, backup_dir=tmp_path / "backups")
    port = [0]
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state, port))
    port[0] = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        set_path.write_text('[{"query": "broken')
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{port[0]}/api/set", timeout=10)
        assert err.value.code == 500 and "JSON" in json.loads(err.value.read())["error"]
    finally:
        server.shutdown()
    set_path.write_text(json.dumps([{"query": "dedupe this csv", "should_trigger": True},
                                    {"query": "write a poem", "should_trigger": False}]))
    (tmp_path / "a-folder").mkdir()
    proc = skilleval_cli.run("review-evals", str(set_path), "--save-to", str(tmp_path / "a-folder"),
                             "--no-open", timeout=60)
    assert proc.returncode == 2 and "a folder; give the file" in proc.stderr, proc.stderr


def test_a_stale_page_cannot_save_over_newer_edits(served, browser) -> None:  # noqa: ANN001
    """Two tabs on the same set: the second save wrote over the first's edits, and both pages
    said "Saved" (the same when the file was redrafted on disk while a page was open)."""
    url, set_path, _ = served
    a, b = browser.new_page(), browser.new_page()
    a.goto(url)
    b.goto(url)
    a.locator("textarea.query").nth(0).fill("tab A: split full_name into first and last in people.csv")
    a.locator("#save").click()
    expect(a.locator("#status")).to_have_text(re.compile(r"^Saved"))
    a.locator("textarea.query").nth(1).fill("tab A again: a second save from the same page is fine")
    a.locator("#save").click()
    expect(a.locator("#status")).to_have_text(re.compile(r"^Saved"))
    saved_by_a = set_path.read_bytes()

    b.locator("textarea.query").nth(0).fill("tab B: stale edit")
    b.locator("#save").click()
    expect(b.locator("#status")).to_have_text(re.compile(r"^Not saved: .*changed since this page loaded it"))
    assert set_path.read_bytes() == saved_by_a
    b.reload()
    assert values(b)[0][0] == "tab A: split full_name into first and last in people.csv"
    b.locator("textarea.query").nth(0).fill("tab B after reloading")
    b.locator("#save").click()
    expect(b.locator("#status")).to_have_text(re.compile(r"^Saved"))
    assert json.loads(set_path.read_text())[0]["query"] == "tab B after reloading"
