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
