"""claude_cli's trial folders: each is removed in a worker thread, never on the event loop
(which meanwhile starts the next CLI and reads the running ones' decisions), and none is left
behind, for trials and for completions alike."""
from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path

import pytest
from backend_cases import trials

import skilleval.backends.claude_cli as claude_cli
from skilleval.backends.claude_cli import ClaudeCliBackend, ClaudeCliParams
from skilleval.domain import Outcome


@pytest.fixture
def removed_in(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The threads the trial folders were removed in (observed, not replaced)."""
    seen: set[str] = set()
    rmtree = shutil.rmtree

    def removed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen.add(threading.current_thread().name)
        return rmtree(*args, **kwargs)
    monkeypatch.setattr(claude_cli.shutil, "rmtree", removed)
    return seen


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The backend's ``work_root``: where its trial folders are made."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def backend(sim, claude_bin: str, work: Path) -> ClaudeCliBackend:  # noqa: ANN001
    return ClaudeCliBackend(ClaudeCliParams(executable=claude_bin, base_url=sim.url, model="sim-1",
                                            work_root=str(work), timeout_s=120.0))


def test_trial_folders_are_removed_off_the_event_loop(sim, claude_bin, work: Path,  # noqa: ANN001
                                                      removed_in: set[str]) -> None:
    b = backend(sim, claude_bin, work)
    items = trials(repeats=1)[:4]

    async def go():  # noqa: ANN202
        loop_thread = threading.current_thread().name
        got = await asyncio.gather(*(b.run_trial(t) for t in items))
        return loop_thread, got
    loop_thread, got = asyncio.run(go())
    assert all(r.outcome in (Outcome.TRIGGERED, Outcome.NOT_TRIGGERED) for r in got), got
    assert removed_in and loop_thread not in removed_in, removed_in
    assert list(work.iterdir()) == []  # nothing left behind


def test_a_completion_leaves_no_folder_behind(sim, claude_bin, work: Path,  # noqa: ANN001
                                              removed_in: set[str]) -> None:
    b = backend(sim, claude_bin, work)

    async def go():  # noqa: ANN202
        return threading.current_thread().name, await b.complete("Say hello")
    loop_thread, done = asyncio.run(go())
    assert "simulated completion" in done.text
    assert removed_in and loop_thread not in removed_in, removed_in
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("when", ["at once", "mid-run"])
def test_a_cancelled_trial_leaves_no_folder_behind(sim, claude_bin, work: Path, when: str) -> None:  # noqa: ANN001
    """A budget stop or Ctrl-C cancels trials in flight: at their first step (the folder is
    being made) or while the CLI waits for the API."""
    sim.configure(latency_ms=5000.0)
    b = backend(sim, claude_bin, work)

    async def go() -> None:
        task = asyncio.create_task(b.run_trial(trials(repeats=1)[0]))
        await asyncio.sleep(0)
        if when == "mid-run":
            while not any(work.iterdir()):
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    asyncio.run(go())
    assert list(work.iterdir()) == []
