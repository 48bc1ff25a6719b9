"""Shared, generic fixtures: an isolated store/outputs environment and a real `skilleval`
subprocess runner. Subfolders add their own conftest.py for anything specific."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import forked_cli
import pytest
from once_per_run import once_per_run, shared_root
from shared_helpers import reset_sim, started_process_env


@pytest.fixture(scope="session", autouse=True)
def _started_processes_env() -> Iterator[None]:
    """Every Python process a test starts gets `shared_helpers.started_process_env`:

    - **without pandas**, as a core install has it (tests/without_pandas/sitecustomize.py says
      why; tests/spine/test_core_install_env.py checks it holds). Set here, in the process that
      runs the tests, and not at import: pytest-xdist's workers are started after this file is
      imported, and they need pandas for statsmodels.
    - **one shared bytecode cache** outside the source tree (``.cache/pycache``), compiled once
      rather than in each process. The suite starts about a thousand of them. With
      ``PYTHONDONTWRITEBYTECODE`` set (as in this project's sandboxes) nothing under
      ``skilleval/`` was ever cached, so every process compiled the modules it imported again:
      ``benchmarks/bytecode_cache.py`` measured the shared cache at 0.92x the CPU of a
      refused-input process (paired 95 % CI 0.88-0.96) and 0.93x of a stub run (0.90-0.96). The
      prefix also keeps ``__pycache__`` folders out of the checkout and of skill folders under
      test."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(started_process_env(saved))
    yield
    os.environ.clear()
    os.environ.update(saved)


@dataclass
class SkillevalCli:
    """Runs ``python -m skilleval.cli ARGS`` in `cwd` with a private store and outputs folder
    (`run`: forked from a warm interpreter, tests/forked_cli.py; `spawn`: a fresh one)."""

    cwd: Path
    store: Path
    outputs: Path
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 120, env: dict[str, str] | None = None,
            check: int | None = None) -> subprocess.CompletedProcess[str]:
        proc = forked_cli.run(list(args), cwd=self.cwd, env={**self.env, **(env or {})},
                              timeout=timeout)
        if check is not None and proc.returncode != check:
            raise AssertionError(f"skilleval {' '.join(args)} exited {proc.returncode}, expected "
                                 f"{check}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
        return proc

    @contextmanager
    def spawn(self, *args: str, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
        """``python -m skilleval.cli ARGS`` running in the background (stderr piped, stdout
        dropped), for tests that kill it mid-run; killed and reaped on exit if still alive."""
        proc = subprocess.Popen(forked_cli.command(list(args)), cwd=self.cwd,
                                env={**self.env, **(env or {})}, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def results(self) -> list[Path]:
        """Every results.json written under the outputs folder, oldest first."""
        return sorted(self.outputs.rglob("results.json"), key=lambda p: p.stat().st_mtime_ns)


def make_cli(root: Path) -> SkillevalCli:
    root.mkdir(parents=True, exist_ok=True)
    store, outputs = root / "store", root / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLEVAL_", "HYDRA_"))}
    env.update(SKILLEVAL_STORE=str(store), SKILLEVAL_OUTPUTS=str(outputs), COLUMNS="200",
               NO_COLOR="1")
    return SkillevalCli(root, store, outputs, env)


@pytest.fixture
def skilleval_cli(tmp_path: Path) -> SkillevalCli:
    """A `skilleval` subprocess runner with SKILLEVAL_STORE / SKILLEVAL_OUTPUTS under tmp_path."""
    return make_cli(tmp_path)


@pytest.fixture
def isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """For in-process tests: point SKILLEVAL_STORE / SKILLEVAL_OUTPUTS at tmp_path."""
    store = tmp_path / "store"
    monkeypatch.setenv("SKILLEVAL_STORE", str(store))
    monkeypatch.setenv("SKILLEVAL_OUTPUTS", str(tmp_path / "out"))
    return store


@pytest.fixture(scope="session")
def make_skilleval_cli():  # noqa: ANN201
    """`make_skilleval_cli(root)` -> SkillevalCli, for module-scoped set-ups (tmp_path_factory)."""
    return make_cli


@dataclass
class FinishedRun:
    """A finished run: the runner holding its store and outputs, and the run's process."""

    cli: SkillevalCli
    proc: subprocess.CompletedProcess[str]


@pytest.fixture(scope="session")
def default_trigger_run(tmp_path_factory: pytest.TempPathFactory) -> FinishedRun:
    """`skilleval +experiment=trigger_eval trigger.runs=1` (the default example on the stub),
    run once per session for the tests that only read it (its output, its store): don't
    write to its store or outputs."""
    proc = once_per_run(tmp_path_factory, "default-trigger-run", lambda root: make_cli(root).run(
        "+experiment=trigger_eval", "trigger.runs=1", check=0))  # once, not once per xdist worker
    return FinishedRun(make_cli(shared_root(tmp_path_factory) / "once-default-trigger-run"), proc)


# -- the real claude CLI -------------------------------------------------------------------


def in_ci() -> bool:
    """CI sets ``CI=true`` (GitHub Actions, GitLab, .ci/run): a missing real component fails there."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The pinned real `claude` binary (installed on demand by .ci/install-claude-cli.sh).

    When it cannot be found or installed, tests that need it skip with the reason on a
    developer machine, and *fail* in CI: a CI run must not pass without the real CLI.
    """
    from skilleval.sim.process import locate_claude_cli

    path, reason = locate_claude_cli()
    if path is None:
        if in_ci():
            pytest.fail(f"real claude CLI unavailable in CI: {reason}", pytrace=False)
        pytest.skip(f"real claude CLI unavailable: {reason}")
    return path


# -- serve-sim: the simulated Messages API as a real subprocess on 127.0.0.1 ---------------


@pytest.fixture(scope="module")
def sim_server():  # noqa: ANN201 - Iterator[SimProcess]
    """One serve-sim per test module."""
    from skilleval.sim.process import SimProcess

    with SimProcess(retry_after_s=0.01, record_bodies=20) as sim:
        yield sim


@pytest.fixture
def sim(sim_server):  # noqa: ANN001, ANN201
    """The module's serve-sim, reset to no faults and no latency for each test."""
    return reset_sim(sim_server)
