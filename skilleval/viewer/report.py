"""`skilleval report`: the viewer's pages for one run or one sweep, in one HTML file.

The report embeds exactly the API answers the live viewer would fetch for that run (keyed by
path), so both show the same pages from the same code. Output files are embedded (images and
other binaries as data: URIs up to a cap); the file is written to a temporary name and renamed
(`atomic.write_text_atomic`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from skilleval.atomic import write_text_atomic
from skilleval.errors import UserError
from skilleval.store.catalog import Store
from skilleval.viewer.api import Api
from skilleval.viewer.render import static_page


def _pick(api: Api, which: str) -> tuple[list[str], str]:
    """(run ids, sweep id) for 'latest', a run id, or a sweep id."""
    q = api.q
    if "runs" not in api.store.tables():
        raise UserError(f"no runs in the store at {api.store.root} (run an experiment first)")
    if which == "latest":
        which = q.latest_run() or ""
    found = q.runs_sql("SELECT run_id, sweep_id FROM runs WHERE run_id = ? OR sweep_id = ? "
                  "ORDER BY job_num, run_id", [which, which])
    if not found:
        raise UserError(f"no run or sweep {which!r} in the store at {api.store.root}")
    sweep = found[0]["sweep_id"]
    if len(found) == 1:  # a run: take its whole sweep when it is one cell of a sweep
        found = q.runs_sql("SELECT run_id FROM runs WHERE sweep_id = ? ORDER BY job_num, run_id", [sweep])
    return [r["run_id"] for r in found], sweep


def collect(api: Api, which: str) -> dict[str, Any]:
    run_ids, sweep = _pick(api, which)
    responses: dict[str, Any] = {"/api/runs": api.q.runs(sweep=sweep, limit=200)}
    for rid in run_ids:
        run = api.get(f"/api/run/{rid}")
        responses[f"/api/run/{rid}"] = run
        pages = set(run["pages"])
        if "trigger" in pages:
            responses[f"/api/run/{rid}/trigger"] = api.page(rid, "trigger", {})
            responses[f"/api/run/{rid}/trials"] = api.page(rid, "trials", {})
        if "opt" in pages:
            responses[f"/api/run/{rid}/opt"] = api.page(rid, "opt", {})
        if pages & {"outputs", "benchmark"}:
            responses[f"/api/run/{rid}/functional"] = api.page(rid, "functional", {})
        if "routing" in pages:
            responses[f"/api/run/{rid}/routing"] = api.page(rid, "routing", {})
        if "comparison" in pages:
            responses[f"/api/run/{rid}/comparison"] = api.page(rid, "comparison", {})
    single = len(run_ids) == 1 or which in run_ids and which != sweep
    start = f"#/run/{run_ids[0]}" if len(run_ids) == 1 else (
        f"#/run/{which}" if single else f"#/sweep/{sweep}")
    return {"responses": responses, "start": start, "runs": run_ids, "sweep": sweep}


def write_report(store: Store, which: str, out: Path) -> Path:
    api = Api(store, live=False)
    data = collect(api, which)
    title = f"skilleval report: {data['runs'][0] if len(data['runs']) == 1 else 'sweep ' + data['sweep']}"
    html = static_page(data, title=title, subtitle=f"static report · {len(data['runs'])} run(s)")
    out = out.expanduser()
    if out.is_dir():
        raise UserError(f"-o {out}: is a folder; give a file name such as report.html")
    try:  # a parent that is a file, a read-only or missing place: one line, not a traceback
        out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out, html)
    except OSError as exc:
        raise UserError(f"-o {out}: cannot write the report: {exc.strerror or exc}") from None
    return out.resolve()
