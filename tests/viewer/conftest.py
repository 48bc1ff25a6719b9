"""Fixtures of the viewer tests: a store filled by real `skilleval` runs (some with hostile
data), a real `skilleval view` subprocess on 127.0.0.1, and Debian's chromium driven by
Playwright. A missing chromium FAILS these tests (CI installs it in .ci/run)."""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest
from once_per_run import once_per_run, shared_root

CHROMIUM = os.environ.get("SKILLEVAL_CHROMIUM", "/usr/bin/chromium")
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]
SENTINEL = "window.__pwned=1"

HOSTILE_CASES = [
    {"query": "</script><script>window.__pwned=1</script> HOSTILE-Q1 release notes", "should_trigger": True},
    {"query": "<img src=x onerror=\"window.__pwned=1\"> HOSTILE-Q2 changelog", "should_trigger": True},
    {"query": "javascript:window.__pwned=1 HOSTILE-Q3", "should_trigger": False},
    {"query": "שלום עולם مرحبا HOSTILE-RTL \u202e update CHANGELOG.md", "should_trigger": True},
    {"query": "write release notes for v1.4.0 from the merged PRs", "should_trigger": True},
    {"query": "what is the weather in Paris", "should_trigger": False},
]


@dataclass
class ViewerEnv:
    cli: Any
    runs: dict[str, str] = field(default_factory=dict)  # experiment label -> run id
    workspace: Path | None = None
    hostile_dir: Path | None = None

    @property
    def store(self) -> Path:
        return self.cli.store


def _last_run(store: Path) -> str:
    """The newest run's id, read in-process (`skilleval sql` has its own tests)."""
    from skilleval.store.catalog import Store

    return Store(store).query("select run_id from runs order by ts desc limit 1").to_pylist()[0]["run_id"]


def add_hostile_files(outputs: Path) -> Path:
    d = outputs / "hostile"
    (d / "nested" / "deeper").mkdir(parents=True, exist_ok=True)
    (d / "script.txt").write_text(f"</script><script>{SENTINEL}</script>HOSTILE-SCRIPT", encoding="utf-8")
    (d / "img.md").write_text(f'# HOSTILE-MD\n<img src=x onerror="{SENTINEL}"> HOSTILE-IMG '
                              f"[click](javascript:{SENTINEL})\n", encoding="utf-8")
    (d / "cells.csv").write_text(f'a,b\n"<img src=x onerror={SENTINEL}>",javascript:{SENTINEL}\nHOSTILE-CELL,2\n',
                                 encoding="utf-8")
    (d / "long.txt").write_text("x" * 1_000_000, encoding="utf-8")
    (d / "blob.bin").write_bytes(bytes(range(256)) * 8)
    (d / "latin1.txt").write_bytes("caf\xe9 HOSTILE-LATIN1".encode("latin-1"))
    (d / "rtl.txt").write_text("مرحبا בעולם HOSTILE-RTL-FILE \u202e", encoding="utf-8")
    (d / "evil.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg" onload="{SENTINEL}"/>', encoding="utf-8")
    (d / "evil.html").write_text(f"<script>{SENTINEL}</script>HOSTILE-HTML", encoding="utf-8")
    (d / "nested" / "deeper" / "data.json").write_text(
        json.dumps({"k": f"</script><script>{SENTINEL}</script>HOSTILE-JSON"}), encoding="utf-8")
    (d / "<img src=x onerror=window.__pwned=1>.txt").write_text("HOSTILE-NAME", encoding="utf-8")
    os.symlink("/etc/passwd", d / "passwd-link")
    return d


def add_hostile_trial(store: Path, run_id: str) -> None:
    """One more trial row of `run_id` whose excerpt is hostile (written with the real writer)."""
    from skilleval.store.catalog import Store
    from skilleval.store.schema import SCHEMA_VERSION

    s = Store(store)
    # a trial of the HOSTILE-Q1 query (the one the browser test opens), chosen explicitly: a
    # bare LIMIT 1 returns whichever row the view's plan yields first
    row = s.query("select * from trials where run_id = ? and query like '%HOSTILE-Q1%' "
                  "order by repeat limit 1", [run_id]).to_pylist()[0]
    row.update(ts=dt.datetime.now(dt.timezone.utc), key="hostile-" + row["key"], repeat=99,
               excerpt=f"</script><script>{SENTINEL}</script><img src=x onerror={SENTINEL}> HOSTILE-EXCERPT",
               schema_version=SCHEMA_VERSION)
    w = s.writer("trials", row["experiment"], run_id)
    w.write([row])
    w.close()


def _build_viewer_env(cli: Any) -> dict[str, Any]:
    """The runs of `viewer_env` into `cli`'s store; their ids and folders, as plain data."""
    from skilleval.store.catalog import Store

    runs: dict[str, str] = {}
    cli.run("-m", "+experiment=trigger_eval", "trigger.threshold=0.3,0.7", "trigger.runs=2", check=0)
    cli.run("+experiment=trigger_opt", "optimize.max_iterations=2", check=0, timeout=300)
    runs["trigger_opt"] = _last_run(cli.store)
    cli.run("+experiment=functional_eval", "functional.runs=1", "functional.analyze=false", check=0, timeout=300)
    runs["functional_eval"] = _last_run(cli.store)
    cases = cli.cwd / "hostile_cases.json"
    cases.write_text(json.dumps(HOSTILE_CASES, ensure_ascii=False), encoding="utf-8")
    cli.run("+experiment=trigger_eval", f"cases={cases}", "trigger.runs=2", check=0)
    runs["trigger_eval"] = _last_run(cli.store)
    add_hostile_trial(cli.store, runs["trigger_eval"])
    summary = Store(cli.store).query("select summary_json from runs where run_id = ?",
                                     [runs["functional_eval"]]).to_pylist()[0]["summary_json"]
    workspace = Path(json.loads(summary)["workspace"])
    first = sorted(p for p in workspace.iterdir() if p.is_dir())[0]
    hostile_dir = add_hostile_files(first / "with_skill" / "run-1" / "outputs")
    return {"runs": runs, "workspace": str(workspace), "hostile_dir": str(hostile_dir)}


@pytest.fixture(scope="session")
def viewer_env(tmp_path_factory: pytest.TempPathFactory, make_skilleval_cli: Any) -> ViewerEnv:
    """Real runs into one store: a sweep, trigger_opt, functional_eval, a hostile trigger_eval.

    Made once per test run (`once_per_run`), not once per xdist worker: the tests only read
    it. The one that writes feedback through the viewer writes feedback.json, which no test
    reads but it; tests that add runs (a live eval) use a store of their own (`live_viewer`)."""
    built = once_per_run(tmp_path_factory, "viewer-env",
                         lambda root: _build_viewer_env(make_skilleval_cli(root)))
    cli = make_skilleval_cli(shared_root(tmp_path_factory) / "once-viewer-env")
    return ViewerEnv(cli, built["runs"], Path(built["workspace"]), Path(built["hostile_dir"]))


@dataclass
class ViewerProcess:
    proc: subprocess.Popen
    url: str


def start_view(store: Path, env: dict[str, str]) -> ViewerProcess:
    proc = subprocess.Popen([sys.executable, "-m", "skilleval.cli", "view", "--port", "0", "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline() if proc.stdout else ""
    m = re.search(r"http://127\.0\.0\.1:\d+/", line)
    if not m:
        proc.kill()
        raise AssertionError(f"skilleval view did not print its URL: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return ViewerProcess(proc, m.group(0))


@pytest.fixture(scope="module")
def viewer(viewer_env: ViewerEnv) -> Iterator[ViewerProcess]:
    vp = start_view(viewer_env.store, viewer_env.cli.env)
    yield vp
    os.kill(vp.proc.pid, signal.SIGTERM)
    vp.proc.wait(timeout=10)


@dataclass
class LiveViewer:
    """A store of its own with `skilleval view` on it, for a test that adds runs while the
    viewer shows them (`viewer_env`'s store is shared, read-only)."""

    cli: Any
    viewer: ViewerProcess


@pytest.fixture
def live_viewer(tmp_path: Path, make_skilleval_cli: Any) -> Iterator[LiveViewer]:
    cli = make_skilleval_cli(tmp_path / "live")
    cli.store.mkdir(parents=True)
    vp = start_view(cli.store, cli.env)
    yield LiveViewer(cli, vp)
    os.kill(vp.proc.pid, signal.SIGTERM)
    vp.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"chromium not found at {CHROMIUM}: install Debian's chromium (apt-get install -y chromium); "
                    "the browser tests (viewer, review-evals) cannot run without it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS)
        yield b
        b.close()


@dataclass
class Page:
    page: Any
    errors: list[str]
    requests: list[str]


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    out = Page(pg, [], [])
    pg.on("console", lambda m: out.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: out.errors.append(str(e)))
    pg.on("request", lambda r: out.requests.append(r.url))
    yield out
    ctx.close()


def open_latest_report(page: Any, cli: Any, out: Path, *, route: str | None = None,
                       link: str | None = None, wait_text: str | None = None) -> Any:
    """`skilleval report latest -o OUT` from `cli`, opened offline (`open_offline`); then the
    page at ``#ROUTE`` or behind the link named `link`, once `wait_text` shows in <main>.
    Returns the playwright page."""
    cli.run("report", "latest", "-o", str(out), check=0)
    open_offline(page, out)
    pg = page.page
    if route:
        pg.goto(out.as_uri() + route)
    if link:
        pg.get_by_role("link", name=link).first.click()
    if wait_text:
        pg.locator("main").get_by_text(wait_text).first.wait_for(timeout=10_000)
    return pg


def open_offline(page: Any, path: Path) -> None:
    """Open a report file with every non-file request recorded in ``page.blocked`` and aborted."""
    blocked: list[str] = []

    def route(r: Any) -> Any:
        if r.request.url.startswith("file://"):
            return r.continue_()
        blocked.append(r.request.url)
        return r.abort()
    page.page.route("**/*", route)
    page.page.goto(path.as_uri())
    page.page.locator("main h1").first.wait_for(timeout=10_000)
    page.page.wait_for_timeout(300)
    page.blocked = blocked
