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
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://"):
            err = self.proc.stderr.read() if self.proc.stderr else ""
            self.proc.kill()
            raise RuntimeError(f"serve-sim did not start: {line!r} {err}")
        self.url = line
        self.http = httpx.Client(base_url=self.url, timeout=10)

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
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()

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
