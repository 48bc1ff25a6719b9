"""Audit of feedback capture in `skilleval view` (real server subprocess, real chromium).

Found: a reload right after typing lost the last words (the debounced save never ran);
"Submit all reviews" clicked right after typing raced the save (the submitted file missed
the text, or the late save turned it back to in_progress); an unreadable feedback.json
(hand-edited, half-copied) was silently replaced by the next keystroke's save."""
from __future__ import annotations

import json
import os
import signal
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.viewer.conftest import start_view


@pytest.fixture(scope="module")
def fb_env(tmp_path_factory: pytest.TempPathFactory, make_skilleval_cli: Any) -> Iterator[tuple[Any, str, Path, str]]:
    cli = make_skilleval_cli(tmp_path_factory.mktemp("loopfb"))
    cli.run("+experiment=functional_eval", "functional.runs=1", "functional.analyze=false",
            "functional.only=[1]", "progress=false", check=0, timeout=300)
    row = json.loads(cli.run("sql", "select run_id, summary_json from runs", "--format", "json",
                             check=0).stdout)[0]
    ws = Path(json.loads(row["summary_json"])["workspace"])
    vp = start_view(cli.store, cli.env)
    yield cli, row["run_id"], ws, vp.url
    os.kill(vp.proc.pid, signal.SIGTERM)
    vp.proc.wait(timeout=10)


def _open_outputs(page: Any, url: str, run_id: str) -> Any:
    pg = page.page
    pg.goto(url + f"#/run/{run_id}/outputs/0")
    pg.locator("main").get_by_text("Prompt").first.wait_for(timeout=10_000)
    return pg


def _reviews(ws: Path) -> dict[str, Any]:
    return json.loads((ws / "feedback.json").read_text(encoding="utf-8"))


def test_a_reload_right_after_typing_keeps_the_text(fb_env, page) -> None:  # noqa: ANN001
    cli, run_id, ws, url = fb_env
    pg = _open_outputs(page, url, run_id)
    box = pg.locator("textarea").first
    review = box.get_attribute("data-review")
    box.click()
    pg.keyboard.insert_text("typed then reloaded at once")
    pg.reload()  # within the 300 ms debounce
    pg.locator("main").get_by_text("Prompt").first.wait_for(timeout=10_000)
    pg.wait_for_function("(r) => document.querySelector(`textarea[data-review='${r}']`).value !== ''",
                         arg=review, timeout=5000)
    assert pg.locator(f"textarea[data-review='{review}']").input_value() == "typed then reloaded at once"
    assert page.errors == []


def test_submit_right_after_typing_submits_the_text(fb_env, page) -> None:  # noqa: ANN001
    cli, run_id, ws, url = fb_env
    pg = _open_outputs(page, url, run_id)
    box = pg.locator("textarea").nth(1)
    review = box.get_attribute("data-review")
    box.click()
    pg.keyboard.insert_text("last words before submit")
    pg.get_by_role("button", name="Submit all reviews (status: complete)").click()
    pg.get_by_text("submitted").first.wait_for(timeout=5000)
    pg.wait_for_timeout(500)  # a save that raced the submit would land here
    data = _reviews(ws)
    assert data["status"] == "complete"
    assert {r["run_id"]: r["feedback"] for r in data["reviews"]}[review] == "last words before submit"
    assert page.errors == []


def test_an_unreadable_feedback_json_is_refused_not_overwritten(fb_env, page) -> None:  # noqa: ANN001
    cli, run_id, ws, url = fb_env
    path = ws / "feedback.json"
    keep = path.read_text(encoding="utf-8") if path.exists() else None
    broken = '{"reviews": [{"run_id": "eval-1-with_skill-run-1", "feedback": "hand-edited",}]}\n'
    path.write_text(broken, encoding="utf-8")
    try:
        pg = _open_outputs(page, url, run_id)
        box = pg.locator("textarea").first
        box.click()
        pg.keyboard.insert_text("x")
        pg.locator(".feedback .errors").first.wait_for(timeout=5000)
        assert "not overwritten" in pg.locator(".feedback .errors").first.inner_text()
        assert path.read_text(encoding="utf-8") == broken
        req = urllib.request.Request(url + "api/feedback/submit", method="POST",
                                     data=json.dumps({"run": run_id}).encode(),
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 409
        assert path.read_text(encoding="utf-8") == broken
    finally:
        if keep is None:
            path.unlink()
        else:
            path.write_text(keep, encoding="utf-8")


def _post(url: str, body: dict[str, Any]) -> int:
    req = urllib.request.Request(url + "api/feedback", method="POST", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_two_tabs_on_one_box_do_not_silently_undo_each_other(fb_env, page) -> None:  # noqa: ANN001
    """Found: the last save won. Tab B, loaded before tab A saved, overwrote A's text with no
    word. Now B's save is refused (409, nothing written) and B's box asks: keep mine, or take
    theirs."""
    cli, run_id, ws, url = fb_env
    pg_a = _open_outputs(page, url, run_id)
    pg_b = pg_a.context.new_page()
    pg_b.goto(url + f"#/run/{run_id}/outputs/0")
    pg_b.locator("main").get_by_text("Prompt").first.wait_for(timeout=10_000)
    box_a, box_b = pg_a.locator("textarea").first, pg_b.locator("textarea").first
    review = box_a.get_attribute("data-review")

    def stored() -> str:
        return {r["run_id"]: r["feedback"] for r in _reviews(ws)["reviews"]}.get(review, "")

    box_a.fill("from tab A")
    pg_a.locator(".feedback").first.get_by_text("saved").wait_for(timeout=5000)
    assert stored() == "from tab A"
    box_b.fill("from tab B")  # typed over the text B loaded, which A has replaced since
    pg_b.get_by_role("button", name="keep mine").wait_for(timeout=5000)
    assert "from tab A" in pg_b.locator(".feedback").first.inner_text()
    assert stored() == "from tab A", "tab B's save overwrote tab A's text"
    pg_b.get_by_role("button", name="keep mine").click()
    pg_b.locator(".feedback").first.get_by_text("saved").wait_for(timeout=5000)
    assert stored() == "from tab B"
    box_a.fill("from tab A, again")  # A's text was replaced by B's meanwhile
    pg_a.get_by_role("button", name="take theirs").click()
    assert box_a.input_value() == "from tab B"
    assert stored() == "from tab B"
    # The same rule for any client of the API; a save without `base` still just saves.
    assert _post(url, {"run": run_id, "review_id": review, "feedback": "x", "base": "stale"}) == 409
    assert stored() == "from tab B"
    assert _post(url, {"run": run_id, "review_id": review, "feedback": "y", "base": "from tab B"}) == 200
    assert _post(url, {"run": run_id, "review_id": review, "feedback": "z"}) == 200
    assert stored() == "z"
    assert all("409" in e for e in page.errors), page.errors  # the refused saves, nothing else
    pg_b.close()
