"""Helpers shared by test folders (a module, not conftest.py: several conftest.py files
exist, and `import conftest` would pick whichever pytest loaded first)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
WITHOUT_PANDAS = REPO / "tests" / "without_pandas"


def started_process_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` as every Python process the suite starts gets it (tests/conftest.py's
    ``_started_processes_env`` says why): tests/without_pandas first on PYTHONPATH, and
    compiled bytecode in one shared folder (PYTHONPYCACHEPREFIX; PYTHONDONTWRITEBYTECODE unset).
    The suite's fixture and ``benchmarks/forked_test_processes.py`` both build it here."""
    out = dict(env)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(WITHOUT_PANDAS), env.get("PYTHONPATH")) if p)
    out["PYTHONPYCACHEPREFIX"] = str(REPO / ".cache" / "pycache")
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out


def install_plugin(name: str, tmp: Path) -> Path:
    """pip-install `plugins/<name>` (from a copy, so the repo stays clean) into a target
    folder and return it; put it on PYTHONPATH to use the plugin, nothing else changes."""
    repo = Path(__file__).resolve().parents[1]
    src = tmp / "src"
    shutil.copytree(repo / "plugins" / name, src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                        "--no-index", "--target", str(site), str(src)], capture_output=True, text=True,
                       env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    return site


def one_line_error(proc, code: int) -> str:  # noqa: ANN001
    """Assert `proc` exited `code` with exactly one stderr line and no traceback; return it."""
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{proc.stderr}"
    return lines[0]


def start_interruptible(cmd: list[str], **popen_kw) -> subprocess.Popen:  # noqa: ANN003
    """Start `cmd` with Ctrl-C's default action, as a terminal's foreground job has it. A job
    started in the background by a non-interactive shell (``nohup ... &``, some CI runners)
    inherits SIGINT *ignored*, Python then installs no KeyboardInterrupt handler, and the
    child would run to its end whatever the test sends."""
    return subprocess.Popen(cmd, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            **popen_kw)


def interrupt_once_running(proc: subprocess.Popen, settle_s: float = 0.5) -> list[str]:
    """Read `proc`'s stderr until its first ``progress:`` line (trials are being paid for),
    wait `settle_s`, send SIGINT (Ctrl-C); return the stderr lines read so far."""
    seen: list[str] = []
    while True:
        line = proc.stderr.readline()
        assert line, "".join(seen)
        seen.append(line)
        if line.startswith("progress:"):
            break
    time.sleep(settle_s)
    proc.send_signal(signal.SIGINT)
    return seen


#: three descriptions of the bundled changelog-writer example: its own wording, a stronger
#: one and an over-broad one (variant sweeps)
CHANGELOG_VARIANTS = {
    "a": "Write changelog entries and release notes from git history.",
    "b": ("Turn git commits, merged pull requests and tags into a user-facing changelog entry in "
          "Keep a Changelog format and suggest the next semantic version. Use when the user asks "
          "to update CHANGELOG.md, write release notes, or summarise what changed since a release."),
    "c": "Use this skill for anything about documentation.",
}


def reset_sim(sim_server):  # noqa: ANN001, ANN201
    """`sim_server` with its stats cleared and no faults, no latency (what `sim` gives a test;
    module-scoped fixtures that share one run among tests call it themselves)."""
    sim_server.reset()
    sim_server.configure(overloaded_rate=0.0, rate_limit_rate=0.0, server_error_rate=0.0,
                         stream_error_rate=0.0, fail_next=[], orient_rate=0.0, latency_ms=0.0,
                         retry_after_s=0.01, cache_min_tokens=1024, batch_delay_ms=100.0,
                         chunk_delay_ms=0.0, stream_cut_rate=0.0)
    return sim_server


def report_job(**fields: object) -> SimpleNamespace:
    """The few fields of a JobContext that the junit and markdown reporters read, for tests
    that render a built benchmark without running a job."""
    base = dict(run_id="r1", sweep_id=None, experiment="functional_eval", summary={},
                backend=SimpleNamespace(name="stub", model="m"), cfg={"skill": "s"}, overrides=[])
    return SimpleNamespace(**{**base, **fields})


def raw_post(url: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str]:
    """A POST with exactly these headers (http.client adds no Content-Length of its own when
    one is given), answered within 10 s or failed."""
    import http.client
    import urllib.parse

    u = urllib.parse.urlsplit(url)
    con = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    con.putrequest("POST", path, skip_accept_encoding=True)
    for k, v in headers.items():
        con.putheader(k, v)
    con.endheaders(body)
    r = con.getresponse()
    return r.status, r.read().decode()


def raw_request_headers(url: str, request: bytes) -> tuple[int, dict[str, str]]:
    """Send these exact bytes to the server at ``url`` and return the answer's status and
    headers (lower-cased names): for requests no HTTP client will send, such as a malformed
    request line or an unknown method, which `http.server` answers itself."""
    import socket
    import urllib.parse

    u = urllib.parse.urlsplit(url)
    with socket.create_connection((u.hostname, u.port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(head[0].split()[1]), headers
