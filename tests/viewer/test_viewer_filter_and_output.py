"""The Runs filter matches its text literally (``%`` and ``_`` were LIKE wildcards in the live
viewer: ``q=%`` listed every run), and `report -o` at a path that cannot be written is one
line and exit 2 (it was a traceback and exit 1)."""
from __future__ import annotations

from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.timeout(240)


def test_runs_filter_matches_wildcards_literally(viewer, viewer_env) -> None:  # noqa: ANN001
    every = httpx.get(viewer.url + "api/runs", params={"limit": 200}, timeout=30).json()["total"]
    assert every >= 3
    # as wildcards each matched runs ("r_n": "trigger.runs=2", "t%l": "trigger_eval");
    # no run id, skill, experiment, model or override holds them as text
    for q in ("%", "%%", "r_n", "t%l", "\\"):
        got = httpx.get(viewer.url + "api/runs", params={"q": q, "limit": 200}, timeout=30).json()
        assert got["total"] == 0, (q, got["total"])
    rid = viewer_env.runs["trigger_eval"]
    got = httpx.get(viewer.url + "api/runs", params={"q": rid[3:12].upper()}, timeout=30).json()
    assert rid in [r["run_id"] for r in got["rows"]]  # plain text still matches, any case
    # "trigger_eval" holds a literal "_": it still finds those runs, and no other experiment
    got = httpx.get(viewer.url + "api/runs", params={"q": "trigger_eval", "limit": 200}, timeout=30).json()
    assert got["total"] >= 1 and all("trigger_eval" in (r["experiment"] + " ".join(r.get("overrides") or []))
                                     or "trigger_eval" in r["run_id"] for r in got["rows"]), got["rows"][:2]


def test_report_to_an_unwritable_path_is_one_line_and_exit_2(viewer_env, tmp_path: Path) -> None:  # noqa: ANN001
    (tmp_path / "bad.json").write_text("{}")
    for out in (tmp_path / "bad.json" / "r.html", Path("/proc/nope/x.html"), Path("/sys/r.html")):
        proc = viewer_env.cli.run("report", "latest", "-o", str(out), check=None)
        assert proc.returncode == 2, (out, proc.returncode, proc.stderr[-500:])
        line = proc.stderr.strip()
        assert "\n" not in line and "Traceback" not in line and str(out) in line, line
    assert [p.name for p in tmp_path.iterdir()] == ["bad.json"]  # no temporary file left behind


def test_static_report_filter_matches_fields_not_json_punctuation(viewer_env, page, tmp_path: Path) -> None:  # noqa: ANN001
    """The report's Runs filter matched a JSON text of the fields: a typed '"', ',' or '['
    listed every run. It now matches each field, as the live viewer's query does."""
    from tests.viewer.conftest import open_offline

    rid = viewer_env.runs["trigger_eval"]
    out = tmp_path / "r.html"
    viewer_env.cli.run("report", rid, "-o", str(out), check=0)
    open_offline(page, out)
    pg = page.page

    def shown(q: str) -> int:
        pg.goto(out.as_uri() + "#/runs?q=" + q)
        pg.locator("main table").first.wait_for(timeout=10_000)
        pg.wait_for_timeout(200)
        return pg.locator("main table tbody tr").count()
    assert shown(rid[3:12]) == 1  # the run's own id still finds it
    for punct in ("%22", "%2C", "%5B", "%22%2C%22"):
        assert shown(punct) == 0, punct
