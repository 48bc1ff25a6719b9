"""claude_cli's trial folders: each is made and removed in a worker thread, never on the event
loop (which meanwhile starts the next CLI and reads the running ones' decisions), and none is
left behind, for trials and for completions alike."""
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
def folder_threads(monkeypatch: pytest.MonkeyPatch) -> dict[str, set[str]]:
    """The threads the trial folders were made and removed in (observed, not replaced)."""
    seen: dict[str, set[str]] = {"made": set(), "removed": set()}
    mkdtemp, rmtree = claude_cli.tempfile.mkdtemp, shutil.rmtree

    def made(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen["made"].add(threading.current_thread().name)
        return mkdtemp(*args, **kwargs)

    def removed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen["removed"].add(threading.current_thread().name)
        return rmtree(*args, **kwargs)
    monkeypatch.setattr(claude_cli.tempfile, "mkdtemp", made)
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


def test_trial_folders_are_made_and_removed_off_the_event_loop(sim, claude_bin, work: Path,  # noqa: ANN001
                                                               folder_threads) -> None:  # noqa: ANN001
    b = backend(sim, claude_bin, work)
    items = trials(repeats=1)[:4]

    async def go():  # noqa: ANN202
        loop_thread = threading.current_thread().name
        got = await asyncio.gather(*(b.run_trial(t) for t in items))
        return loop_thread, got
    loop_thread, got = asyncio.run(go())
    assert all(r.outcome in (Outcome.TRIGGERED, Outcome.NOT_TRIGGERED) for r in got), got
    assert folder_threads["made"] and folder_threads["removed"]
    assert loop_thread not in folder_threads["made"] | folder_threads["removed"], folder_threads
    assert list(work.iterdir()) == []  # nothing left behind


def test_a_completion_leaves_no_folder_behind(sim, claude_bin, work: Path,  # noqa: ANN001
                                              folder_threads) -> None:  # noqa: ANN001
    b = backend(sim, claude_bin, work)

    async def go():  # noqa: ANN202
        return threading.current_thread().name, await b.complete("Say hello")
    loop_thread, done = asyncio.run(go())
    assert "simulated completion" in done.text
    assert folder_threads["removed"] and loop_thread not in folder_threads["removed"]
    assert list(work.iterdir()) == []
