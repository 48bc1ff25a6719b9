"""Issue 8 item 8: claude_cli makes one API call per trial, even under load, and by default
runs no more CLI processes than there are CPUs (the CLI is CPU-bound)."""
from __future__ import annotations

import asyncio

import pytest

from backend_cases import PDF, trials
from skilleval.backends.claude_cli import ClaudeCliBackend, ClaudeCliParams
from skilleval.backends.cli_process import usable_cpus
from skilleval.domain import Outcome

pytestmark = pytest.mark.timeout(240)


def test_default_process_cap_is_the_usable_cpus(sim, claude_bin) -> None:  # noqa: ANN001
    b = ClaudeCliBackend(ClaudeCliParams(executable=claude_bin, base_url=sim.url, model="sim-1"))
    assert b.max_processes == usable_cpus()
    assert ClaudeCliBackend(ClaudeCliParams(executable=claude_bin, concurrency=5)).max_processes == 5


def test_one_api_call_per_trial_under_load(sim, claude_bin) -> None:  # noqa: ANN001
    """Eight CLIs at once on a small machine: each stops at its Skill call by itself (a
    PreToolUse hook), so no trial sends the tool result back for a second answer, however
    late the kill lands."""
    sim.configure(latency_ms=50.0)
    items = [t for t in trials(repeats=4, queries=["Please fill in the PDF form tax.pdf with my name",
                                                  "populate the fields of this pdf form for me"])]
    b = ClaudeCliBackend(ClaudeCliParams(executable=claude_bin, base_url=sim.url, model="sim-1",
                                         timeout_s=120.0, concurrency=8))
    before = sim.stats().get("POST /v1/messages", 0)

    async def go():  # noqa: ANN202
        return await asyncio.gather(*(b.run_trial(t) for t in items))
    got = asyncio.run(go())
    assert all(r.outcome is Outcome.TRIGGERED and r.fired == PDF.name for r in got), got
    assert sim.stats().get("POST /v1/messages", 0) - before == len(items)
