"""`python -m skilleval.cli ARGS` for the suite, as a child of a fork server that has already
imported what every `skilleval` process imports (tests/cli_fork_server.py says why).

`run()` has `subprocess.run(..., capture_output=True, text=True, timeout=...)`'s contract: a
`CompletedProcess` with the exit code and both streams, or `TimeoutExpired` after killing the
command. With ``SKILLEVAL_TESTS_FRESH_PROCESSES=1`` every request runs in a fresh interpreter
instead, to check that the suite passes the same either way.

One server per start-up environment in each test process (an xdist worker), started with the
first request's environment (so a test that puts a hook on PYTHONPATH gets a server that imported
under it, and no other test does) and stopped when the test process exits. Calls to one server
are serialised: a test that needs commands running side by side starts them with
`subprocess.Popen` itself.
"""
from __future__ import annotations

import atexit
import json
import locale
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SERVER = Path(__file__).with_name("cli_fork_server.py")
_STARTUP_PREFIXES = ("PYTHON", "LC_", "LANG")  # read when an interpreter starts


def _startup_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(_STARTUP_PREFIXES)}


class ForkServer:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = dict(env)
        self._log = tempfile.NamedTemporaryFile(prefix="skilleval-fork-server-", suffix=".log")  # noqa: SIM115
        self._proc = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._log, env=self.env)
        self._buffer = b""
        self.lock = threading.Lock()
        self.runs = 0
        self.children_cpu = 0.0  # CPU seconds of every command it ran

    @property
    def pid(self) -> int:
        return self._proc.pid

    def alive(self) -> bool:
        return self._proc.poll() is None

    def _answer(self, deadline: float | None) -> dict | None:
        """The server's next JSON line, or None if `deadline` (monotonic) passes first."""
        out = self._proc.stdout
        assert out is not None
        while b"\n" not in self._buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([out], [], [], wait)[0]:
                return None
            chunk = os.read(out.fileno(), 65536)
            if not chunk:
                code = self._proc.wait()
                log = Path(self._log.name).read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the fork server ({SERVER.name}) exited with {code}:\n{log}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def run(self, args: list[str], *, cwd: Path, env: dict[str, str], timeout: float | None
            ) -> subprocess.CompletedProcess[str]:
        cmd = command(args)
        with self.lock, tempfile.TemporaryDirectory(prefix="skilleval-forked-") as tmp:
            out, err = Path(tmp, "stdout"), Path(tmp, "stderr")
            request = {"args": list(args), "cwd": str(cwd), "env": env,
                       "stdout": str(out), "stderr": str(err)}
            assert self._proc.stdin is not None
            self._proc.stdin.write((json.dumps(request) + "\n").encode())
            self._proc.stdin.flush()
            pid = self._answer(None)["pid"]  # type: ignore[index]
            done = self._answer(None if timeout is None else time.monotonic() + timeout)
            if done is None:
                os.kill(pid, signal.SIGKILL)
                self._answer(None)
                raise subprocess.TimeoutExpired(cmd, timeout, output=_text(out), stderr=_text(err))
            self.runs += 1
            self.children_cpu += done["cpu"]
            return subprocess.CompletedProcess(cmd, done["code"], _text(out), _text(err))

    def stop(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._log.close()


def _text(path: Path) -> str:
    """As `subprocess.run(text=True)` decodes: the locale's encoding, universal newlines."""
    return path.read_text(encoding=locale.getpreferredencoding(False)) if path.exists() else ""


_servers: dict[tuple[tuple[str, str], ...], ForkServer] = {}


def server(env: dict[str, str]) -> ForkServer:
    """The running server whose start-up environment is `env`'s, started if there is none."""
    key = tuple(sorted(_startup_env(env).items()))
    warm = _servers.get(key)
    if warm is None or not warm.alive():  # none yet, or it died
        warm = _servers[key] = ForkServer(env)
        atexit.register(warm.stop)
    return warm


def command(args: list[str]) -> list[str]:
    """The fresh interpreter's command line for `skilleval ARGS`, as the suite runs it."""
    return [sys.executable, "-m", "skilleval.cli", *args]


def fresh(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float | None = None
          ) -> subprocess.CompletedProcess[str]:
    """`skilleval ARGS` in a fresh interpreter, output captured as text."""
    return subprocess.run(command(args), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def run(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float | None = None
        ) -> subprocess.CompletedProcess[str]:
    """`fresh(args, ...)`'s result, forked from the warm server for `env`'s start-up
    environment (a fresh interpreter under SKILLEVAL_TESTS_FRESH_PROCESSES=1)."""
    if os.environ.get("SKILLEVAL_TESTS_FRESH_PROCESSES") != "1":
        return server(env).run(args, cwd=cwd, env=env, timeout=timeout)
    return fresh(args, cwd=cwd, env=env, timeout=timeout)
