"""Knobs of the simulated Messages API: fault injection, latency and simulator calibration.

Every field is settable on the command line (``--overloaded-rate 0.3``) and at runtime with
``POST /_sim/config`` (``{"overloaded_rate": 0.3}``), so a test can flip a fault on and off
around one step.
"""
from __future__ import annotations

import dataclasses
import random
import threading
from dataclasses import dataclass, field
from typing import Any

from skilleval.sim import model as sim

STREAM_CUT = -1  # draw_status: end the stream after message_start, with no error event


@dataclass
class SimConfig:
    latency_ms: float = 0.0           # before the response headers (time to first byte)
    latency_jitter_ms: float = 0.0
    chunk_delay_ms: float = 0.0       # between SSE events
    overloaded_rate: float = 0.0      # share of /v1/messages answered 529 overloaded_error
    rate_limit_rate: float = 0.0      # share answered 429 rate_limit_error
    server_error_rate: float = 0.0    # share answered 500 api_error
    stream_error_rate: float = 0.0    # share of streams that send `event: error` mid-way
    stream_cut_rate: float = 0.0      # share of streams cut after message_start (dropped connection)
    retry_after_s: float | None = 1.0  # `retry-after` on 429/529 (None: no header)
    fail_next: list[int] = field(default_factory=list)  # statuses for the next requests; 200 = stream error
    orient_rate: float = 0.0          # share of trigger turns that first make an orientation tool call
    seed: int = 0                     # fault draws
    cache_min_tokens: int = 1024
    batch_delay_ms: float = 200.0     # how long a batch stays in_progress
    require_auth: bool = True
    record_bodies: int = 0            # keep the last N /v1/messages bodies for GET /_sim/requests
    # A hostile model (tests/hostile): the skill name its Skill calls use instead of the one
    # decided, and tool_use blocks (``{"name": ..., "input": {...}}``) answered, one per
    # request that offers that tool, before anything else.
    hostile_skill_name: str | None = None
    hostile_tool_calls: list[dict[str, Any]] = field(default_factory=list)
    slope: float = sim.Params.slope
    midpoint: float = sim.Params.midpoint
    exclusion_penalty: float = sim.Params.exclusion_penalty
    competitor_temperature: float = sim.Params.competitor_temperature

    @property
    def sim_params(self) -> sim.Params:
        return sim.Params(slope=self.slope, midpoint=self.midpoint,
                          exclusion_penalty=self.exclusion_penalty,
                          competitor_temperature=self.competitor_temperature)

    def update(self, values: dict[str, Any]) -> None:
        known = {f.name: f for f in dataclasses.fields(self)}
        for key, value in values.items():
            if key not in known:
                raise KeyError(f"unknown sim config key {key!r}; known: {', '.join(sorted(known))}")
            setattr(self, key, value)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class Faults:
    """Draws faults for each request. Thread-safe; draws are seeded but arrival-ordered."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self._rng = random.Random(config.seed)
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def reseed(self) -> None:
        with self._lock:
            self._rng = random.Random(self.config.seed)

    def counts_snapshot(self, clear: bool = False) -> dict[str, int]:
        """A copy of the fault counters, taken under the lock that guards their updates."""
        with self._lock:
            counts = dict(self.counts)
            if clear:
                self.counts.clear()
        return counts

    def _count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1

    def draw_status(self, streaming: bool) -> int:
        """0 = answer normally; 429/529/500 = fail with that status; 200 = fail mid-stream;
        ``STREAM_CUT`` = stop the stream after ``message_start``."""
        c = self.config
        with self._lock:
            if c.fail_next:
                status = int(c.fail_next.pop(0))
                if status == 200 and not streaming:
                    status = 529
                self._count("stream_error" if status == 200 else str(status))
                return status
            u = self._rng.random()
            for rate, status in ((c.overloaded_rate, 529), (c.rate_limit_rate, 429),
                                 (c.server_error_rate, 500)):
                if u < rate:
                    self._count(str(status))
                    return status
                u -= rate
            if streaming and self._rng.random() < c.stream_error_rate:
                self._count("stream_error")
                return 200
            if streaming and c.stream_cut_rate and self._rng.random() < c.stream_cut_rate:
                self._count("stream_cut")
                return STREAM_CUT
        return 0

    def latency_s(self) -> float:
        c = self.config
        with self._lock:
            jitter = (self._rng.random() * 2 - 1) * c.latency_jitter_ms
        return max(0.0, c.latency_ms + jitter) / 1000

    def uniform(self) -> float:
        with self._lock:
            return self._rng.random()
