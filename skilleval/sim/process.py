"""Run ``serve-sim`` as a real subprocess and drive its test controls.

Used by skilleval's tests and benchmarks, and meant for users' own offline CI::

    with SimProcess(latency_ms=50) as sim:
        sim.configure(overloaded_rate=0.3)
        ... backend.base_url=sim.url ...
        assert sim.stats()["fault_529"] > 0
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import httpx


class SimProcess:
    def __init__(self, *, verbose: bool = False, **config: Any) -> None:
        argv = [sys.executable, "-m", "skilleval.sim.server", "--port", "0"]
        for key, value in config.items():
            flag = "--" + key.replace("_", "-")
            if isinstance(value, list):
                value = ",".join(str(v) for v in value)
            argv += [flag, str(value)]
        if verbose:
            argv.append("--verbose")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in [os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                        env.get("PYTHONPATH", "")] if p)
        # stderr goes to a file, not a pipe: nobody reads a pipe while the server runs, and a
        # full one (--verbose request lines, tracebacks) would block every handler thread.
        self.stderr_file = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.stderr_file,
                                     stdin=subprocess.DEVNULL, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://"):
            self.proc.kill()
            self.proc.wait()
            err = self.stderr_text()
            self.stderr_file.close()
            raise RuntimeError(f"serve-sim did not start: {line!r} {err}")
        self.url = line
        self.http = httpx.Client(base_url=self.url, timeout=10)

    def stderr_text(self) -> str:
        """What the server wrote to stderr so far."""
        self.stderr_file.flush()
        self.stderr_file.seek(0)
        return self.stderr_file.read()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def configure(self, **values: Any) -> dict[str, Any]:
        response = self.http.post("/_sim/config", json=values)
        response.raise_for_status()
        return response.json()

    def stats(self) -> dict[str, int]:
        return self.http.get("/_sim/stats").json()

    def log(self) -> list[dict[str, Any]]:
        return self.http.get("/_sim/log").json()

    def reset(self, **config: Any) -> None:
        self.http.post("/_sim/reset").raise_for_status()
        if config:
            self.configure(**config)

    def close(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.stderr_file.close()

    def __enter__(self) -> "SimProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def wait_until(predicate: Any, timeout: float = 5.0, interval: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def locate_claude_cli(install: bool = True) -> tuple[str | None, str]:
    """(path to the pinned real `claude` binary, reason when None).

    ``SKILLEVAL_CLAUDE_BIN`` wins; otherwise ``.ci/install-claude-cli.sh`` installs (or finds)
    the pinned version under ``.cache/claude-cli/``. None only when npm is truly unavailable
    or the install failed, with the reason.
    """
    import shutil
    from pathlib import Path

    explicit = os.environ.get("SKILLEVAL_CLAUDE_BIN")
    if explicit:
        return (explicit, "") if os.access(explicit, os.X_OK) else (None, f"SKILLEVAL_CLAUDE_BIN={explicit} is not executable")
    root = Path(__file__).resolve().parents[2]
    script = root / ".ci" / "install-claude-cli.sh"
    if not script.exists():
        return None, f"{script} is missing"
    if not install:
        found = sorted(root.glob(".cache/claude-cli/*/node_modules/.bin/claude"))
        return (str(found[-1]), "") if found else (None, "claude CLI not installed")
    if shutil.which("npm") is None and not list(root.glob(".cache/claude-cli/*/.installed")):
        return None, "npm is not installed, so the real claude CLI cannot be installed"
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return None, f"install-claude-cli.sh failed: {proc.stderr.strip()[-300:]}"
    return proc.stdout.strip().splitlines()[-1], ""
