"""Fixtures: serve-sim subprocess (see tests/sim/conftest.py) and the pinned real claude CLI."""
from __future__ import annotations

from typing import Iterator

import pytest

from skilleval.sim.process import SimProcess, locate_claude_cli


@pytest.fixture(scope="module")
def sim_server() -> Iterator[SimProcess]:
    with SimProcess(retry_after_s=0.01, record_bodies=20) as sim:
        yield sim


@pytest.fixture
def sim(sim_server: SimProcess) -> SimProcess:
    sim_server.reset()
    sim_server.configure(overloaded_rate=0.0, rate_limit_rate=0.0, server_error_rate=0.0,
                         stream_error_rate=0.0, fail_next=[], orient_rate=0.0, latency_ms=0.0,
                         retry_after_s=0.01, cache_min_tokens=1024, batch_delay_ms=100.0)
    return sim_server


@pytest.fixture(scope="session")
def claude_bin() -> str:
    path, reason = locate_claude_cli()
    if path is None:
        pytest.skip(f"real claude CLI unavailable: {reason}")
    return path
