"""The `ray` executor: each trigger trial is a Ray task, so CPU-bound trials (the claude CLI
uses ~0.45 s of CPU each) spread over every node of a cluster.

* Keys, cache and rows stay on the driver (see `skilleval.executors.base`): results come
  back as task returns and the driver's runner records them through its one writer.
* Each task asks for ``cpus_per_trial`` CPUs, so Ray runs at most CPUs ÷ that trials at
  once on each node; the driver keeps exactly the cluster's slots in flight.
* A worker (or node) that dies mid-trial makes Ray re-run the task elsewhere
  (``max_retries``). Nothing was recorded for it, so no row is duplicated; and a per-job
  ledger actor remembers every answer a worker received, so a re-run of a trial whose
  answer already came back returns that answer instead of calling the backend again. The
  only call that can be repeated is one whose worker died before its answer arrived.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
from collections import Counter
from typing import Any

import ray

from skilleval.backends.base import Backend
from skilleval.domain import Outcome, Trial, TrialResult
from skilleval.errors import UserError
from skilleval.executors.ray_params import RayParams


@ray.remote(num_cpus=0)
class TrialLedger:
    """Per-job record of the answers workers got, by trial key (driver-side actor)."""

    def __init__(self) -> None:
        self.answers: dict[str, TrialResult] = {}
        self.running: dict[str, int] = {}  # key -> pid of the worker calling the backend
        self.begun: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()

    def claim(self, key: str, pid: int) -> TrialResult | None:
        """The answer an earlier attempt already got, or None after noting that `pid` now
        calls the backend for `key` (one round-trip for both)."""
        known = self.answers.get(key)
        if known is None:
            self.running[key] = pid
            self.begun[key] += 1
        return known

    def finish(self, key: str, result: TrialResult) -> None:
        self.running.pop(key, None)
        self.answers[key] = result
        self.answered[key] += 1

    def forget(self, key: str) -> None:
        """The driver has the answer: its task can no longer be retried."""
        self.answers.pop(key, None)

    def in_flight(self) -> dict[str, int]:
        return dict(self.running)

    def stats(self) -> dict[str, dict[str, int]]:
        return {"begun": dict(self.begun), "answered": dict(self.answered)}


# -- worker side ------------------------------------------------------------------------

_backends: dict[str, Backend] = {}
_loop: asyncio.AbstractEventLoop | None = None


def _worker_backend(config: dict[str, Any]) -> Backend:
    """One backend per worker process and config (clients bind to the worker's loop)."""
    key = json.dumps(config, sort_keys=True, default=str)
    if key not in _backends:
        from skilleval.registry import default_registry

        _backends[key] = default_registry().build("backend", dict(config))
    return _backends[key]


def run_trial_task(config: dict[str, Any], trial: Trial, ledger: Any) -> TrialResult:
    """Body of one Ray task: the backend call, unless a previous attempt already got it."""
    global _loop
    known = ray.get(ledger.claim.remote(trial.key, os.getpid()))
    if known is not None:
        return known
    if _loop is None:
        _loop = asyncio.new_event_loop()
    try:
        result = _loop.run_until_complete(_worker_backend(config).run_trial(trial))
    except Exception as exc:  # same as the local runner: an error outcome, never a "no"
        result = TrialResult(trial.key, Outcome.ERROR, error=f"{type(exc).__name__}: {exc}"[:500])
    ray.get(ledger.finish.remote(trial.key, result))
    return result


# -- driver side ------------------------------------------------------------------------


def _check_address(address: str | None) -> None:
    """A cluster address nobody answers on is exit 2 at once: ``ray.init`` would retry
    for minutes before failing."""
    if not address or address == "auto":
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"executor.address {address!r}: expected HOST:PORT, ray://HOST:PORT or auto")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise UserError(f"executor.address {address!r}: no Ray cluster answers there "
                        f"({exc.strerror or exc})") from None


class RayExecutor:
    def __init__(self, params: RayParams) -> None:
        if params.cpus_per_trial <= 0:
            raise UserError(f"executor.cpus_per_trial must be > 0, got {params.cpus_per_trial}")
        if params.max_retries < 0:
            raise UserError(f"executor.max_retries must be >= 0, got {params.max_retries}")
        self.params = params
        _check_address(params.address or os.environ.get("RAY_ADDRESS"))
        self.ledger: Any = None
        self._task: Any = None
        self._config: dict[str, Any] = {}
        self._owns_ray = False

    def start(self, backend: Backend, backend_config: dict[str, Any]) -> None:
        p = self.params
        if not ray.is_initialized():
            address = p.address or os.environ.get("RAY_ADDRESS") or None
            try:
                ray.init(address=address, num_cpus=None if address else p.num_cpus,
                         include_dashboard=False, log_to_driver=False,
                         configure_logging=False)
            except Exception as exc:  # noqa: BLE001 - ray raises ConnectionError, RuntimeError, ...
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
                raise UserError(f"executor=ray: cannot start or join Ray at "
                                f"{address or 'a new local cluster'} ({first})") from None
            self._owns_ray = True
        self._config = dict(backend_config)
        self.ledger = TrialLedger.remote()
        self._task = ray.remote(run_trial_task).options(
            num_cpus=p.cpus_per_trial, max_retries=p.max_retries, retry_exceptions=False)

    def slots(self, concurrency: int) -> int:
        """The cluster's trial slots (CPUs ÷ cpus_per_trial, summed over nodes);
        trigger.concurrency does not apply: the bound is each node's CPUs."""
        cpus = float(ray.cluster_resources().get("CPU", 1))
        return max(1, int(cpus // self.params.cpus_per_trial))

    async def run_trial(self, trial: Trial) -> TrialResult:
        result: TrialResult = await self._task.remote(self._config, trial, self.ledger)
        self.ledger.forget.remote(trial.key)
        return result

    def ledger_stats(self) -> dict[str, dict[str, int]]:
        return ray.get(self.ledger.stats.remote())

    def in_flight(self) -> dict[str, int]:
        return ray.get(self.ledger.in_flight.remote())

    async def aclose(self) -> None:
        if self.ledger is not None:
            ray.kill(self.ledger)
            self.ledger = None
        if self._owns_ray:
            ray.shutdown()
            self._owns_ray = False
