"""review-evals Save against the rules the runner reads by: a set skilleval runs saves again
unchanged (integer ids, extra keys of any type, long queries), errors name rows as the page
numbers them (#1 first), and a .jsonl set is replaced atomically (a new inode), not rewritten
in place. Over real HTTP against the real server, and in Chromium where the page is involved."""
from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from playwright.sync_api import expect

from skilleval.datasets import load_trigger_cases

LONG = "dedupe " + "x" * 5000  # longer than the old 4000-character save limit; trigger_eval runs it
EXTRAS = [{"query": "dedupe my csv", "should_trigger": True, "id": 1, "tags": ["a"]},
          {"query": "what is the weather", "should_trigger": False, "weight": 0.5, "notes": None},
          {"query": "clean up data.csv", "should_trigger": True, "id": 0, "meta": {"by": "me"}},
          {"query": LONG, "should_trigger": True, "id": "long-one"}]


def _serve(set_path: Path, tmp: Path) -> tuple[subprocess.Popen, str]:
    """`skilleval review-evals SET --no-open` as the user runs it; (process, its URL)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLEVAL_")}
    env["SKILLEVAL_STORE"] = str(tmp / "store")
    env["SKILLEVAL_BACKUPS"] = str(tmp / "backups")
    proc = subprocess.Popen([sys.executable, "-m", "skilleval.cli", "review-evals", str(set_path), "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(proc.stdout.readline() if proc.stdout else ""), daemon=True).start()
    try:
        first = lines.get(timeout=60)
    except queue.Empty:
        proc.kill()
        raise AssertionError("review-evals printed no URL within 60 s") from None
    if " at http://127.0.0.1:" not in first:
        proc.kill()
        raise AssertionError(first + (proc.stderr.read() if proc.stderr else ""))
    return proc, first.split(" at ", 1)[1].split()[0]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen] = []

    def start(rows: list[dict[str, Any]] | str, name: str = "set.json") -> tuple[str, Path]:
        path = tmp_path / name
        path.write_text(rows if isinstance(rows, str) else json.dumps(rows), encoding="utf-8")
        proc, url = _serve(path, tmp_path)
        procs.append(proc)
        return url, path
    yield start
    for p in procs:
        p.terminate()
        p.wait(timeout=10)


def _page_data(url: str) -> dict[str, Any]:
    return json.loads(httpx.get(url).text.split('id="review-data">')[1].split("</script>")[0])


def _save(url: str, token: str, rows: list[dict[str, Any]]) -> httpx.Response:
    return httpx.post(url + "api/save", json={"rows": rows}, headers={"X-Review-Token": token}, timeout=30)


def test_a_set_the_runner_reads_saves_unchanged_with_its_keys_as_they_were(serve) -> None:  # noqa: ANN001
    """Save refused it: "entry 0: 'id' must be a string", a list in `tags`, and a query over
    4000 characters that trigger_eval runs."""
    url, path = serve(EXTRAS)
    assert len(load_trigger_cases(path)) == 4  # what skilleval itself runs
    data = _page_data(url)
    r = _save(url, data["token"], data["rows"])
    assert r.status_code == 200, r.text
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert [row["query"] for row in saved] == [row["query"] for row in EXTRAS]
    for before, after in zip(EXTRAS, saved):
        for key, value in before.items():  # every key the page cannot edit, as it was
            assert key in after and after[key] == value and type(after[key]) is type(value), (key, after)
    assert saved[1]["id"] not in (1, 0, "long-one")  # the row without an id got one
    assert len(load_trigger_cases(path)) == 4  # and the runner still reads the saved set


def test_reader_and_saver_refuse_the_same_entries(serve, tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    """An id the runner refuses (true, a list) or an unknown split is refused when the set is
    opened (exit 2, one line), not by the first Save after the user's edits."""
    for bad, words in (({"id": True}, "'id'"), ({"id": [1]}, "'id'"), ({"split": "dev"}, "'split'")):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps([{"query": "dedupe my csv", "should_trigger": True, **bad}]))
        with pytest.raises(Exception):
            load_trigger_cases(path)
        proc = skilleval_cli.run("review-evals", str(path), "--no-open", timeout=20)
        assert proc.returncode == 2 and words in proc.stderr, (bad, proc.returncode, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    url, _ = serve([{"query": "dedupe my csv", "should_trigger": True}])
    token = _page_data(url)["token"]
    r = _save(url, token, [{"query": "dedupe my csv", "should_trigger": True, "id": True}])
    assert r.status_code == 400 and "'id'" in r.json()["error"], r.text
    r = _save(url, token, [{"query": "a", "should_trigger": True, "id": 7},
                           {"query": "b", "should_trigger": False, "id": "7"}])
    assert r.status_code == 400 and "id" in r.json()["error"], r.text  # the runner reads ids as text


def test_errors_number_rows_as_the_page_does(serve) -> None:  # noqa: ANN001
    url, path = serve([{"query": f"query number {i}", "should_trigger": i % 2 == 0} for i in range(6)])
    on_disk = path.read_bytes()
    data = _page_data(url)
    rows = [dict(r) for r in data["rows"]]
    rows[4]["should_trigger"] = "yes"
    err = _save(url, data["token"], rows).json()["error"]
    assert "row #5" in err and "#4" not in err, err
    rows = [dict(r) for r in data["rows"]]
    rows[3]["query"] = rows[1]["query"]
    err = _save(url, data["token"], rows).json()["error"]
    assert "row #4" in err and "row #2" in err and "duplicate" in err, err
    assert path.read_bytes() == on_disk


def test_page_error_names_the_row_numbers_shown_with_a_blank_row_above(serve, browser) -> None:  # noqa: ANN001
    """A blank row (left out of the save) shifted the numbers: row #5 was "entry 3"."""
    url, path = serve([{"query": f"query number {i}", "should_trigger": True} for i in range(6)])
    page = browser.new_page()
    page.goto(url)
    qs = page.locator("textarea.query")
    qs.nth(1).fill("")  # row #2 left blank: not saved
    qs.nth(4).fill(qs.nth(0).input_value())  # row #5 repeats row #1
    page.locator("#save").click()
    expect(page.locator("#status")).to_have_text(re.compile(r"^Not saved"))
    status = page.locator("#status").text_content() or ""
    assert "row #5" in status and "row #1" in status, status
    page.close()


def test_jsonl_set_is_replaced_atomically(serve) -> None:  # noqa: ANN001
    """The .jsonl set was truncated and rewritten in place (same inode): a crash mid-write
    left half a set. Now a temporary file is renamed over it."""
    rows = [{"query": "dedupe my csv", "should_trigger": True, "id": "a"},
            {"query": "what is the weather", "should_trigger": False, "id": "b"}]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    url, path = serve(text, "set.jsonl")
    inode = path.stat().st_ino
    data = _page_data(url)
    r = _save(url, data["token"], data["rows"])
    assert r.status_code == 200, r.text
    assert path.stat().st_ino != inode
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in lines] == rows
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []
