"""The trial-executor protocol, and `local`: the backend called on the job's own event loop.

The trial runner plans trials, computes their keys, reads cached ones and records results;
an executor only answers "run this trial". Keeping keys, cache and writer on the driver is
what makes every executor give the same keys, reuse the same cache and write every row
exactly once (from the driver's writer), wherever the call itself ran.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from skilleval.backends.base import Backend
from skilleval.domain import Trial, TrialResult


class Executor(Protocol):
    """What an ``register_executors`` factory returns."""

    def start(self, backend: Backend, backend_config: dict[str, Any]) -> None:
        """Called once per job before the first trial. `backend` is the job's backend;
        `backend_config` its config node (``{"name": ..., params}``), from which a remote
        worker builds its own copy through the plugin registry."""

    def slots(self, concurrency: int) -> int:
        """How many trials the runner keeps in flight (`concurrency` is trigger.concurrency)."""

    async def run_trial(self, trial: Trial) -> TrialResult:
        """Run one trial. A backend exception may propagate: the runner records it as an
        error outcome (never as "not triggered")."""

    async def aclose(self) -> None:
        """Release what `start` acquired (the job's loop is still running)."""


@dataclass
class LocalParams:
    pass


class LocalExecutor:
    """Today's asyncio runner: up to ``trigger.concurrency`` calls in flight in this process."""

    def __init__(self, params: LocalParams | dict | None = None) -> None:
        self.backend: Backend | None = None

    def start(self, backend: Backend, backend_config: dict[str, Any]) -> None:
        self.backend = backend

    def slots(self, concurrency: int) -> int:
        return max(1, concurrency)

    async def run_trial(self, trial: Trial) -> TrialResult:
        assert self.backend is not None, "executor used before start()"
        return await self.backend.run_trial(trial)

    async def aclose(self) -> None:
        return None
