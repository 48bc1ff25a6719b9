"""The ``claude_cli`` backend: trigger trials through the real ``claude -p`` (Claude Code).

Each trial runs in isolation (avoiding skill-creator's B1-B7, see ``skill-creator.md`` §13):

* a fresh temp project holding exactly the trial's skills as the user's real folders under
  ``.claude/skills/<name>/`` (every frontmatter key, every resource file; only the
  description is replaced when a candidate is under test), and no ancestor ``.claude``.
  Claude Code then applies its own listing rules (a ``disable-model-invocation`` skill is
  installed but never shown);
* its own ``CLAUDE_CONFIG_DIR`` (no user skills, settings or shared ``.claude.json``),
  ``CLAUDE_CODE_DISABLE_BUNDLED_SKILLS=1``, the builtin plugin skill disabled,
  ``--setting-sources project``, ``--strict-mcp-config``, stdin closed, ``CLAUDECODE`` removed;
* the process runs in its own session; its whole process group is killed as soon as a Skill
  call decides the verdict, or at the timeout, and always before the trial returns.

API errors reported by the CLI (``is_error`` with ``api_error_status``) are retried as whole
runs with backoff and counted; they, exit codes, malformed output and timeouts are error
outcomes, never "not triggered". The key or OAuth token is inherited from the environment and
appears in no argument, file, result or log line this backend writes.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from skilleval.backends.base import BaseBackend
from skilleval.backends.cli_gate import IdleMeter, ProcessGate
from skilleval.backends.cli_process import (
    ISOLATION_SETTINGS,
    TRIAL_SETTINGS,
    kill_group,
    reap,
    signal_group,
    usable_cpus,
)
from skilleval.backends.cli_stream import CliRun, reported_api_wait_s
from skilleval.backends.params import ClaudeCliParams, check_base_url, check_bounds
from skilleval.backends.pricing import load_table, worst_case_usd
from skilleval.domain import Completion, Outcome, Skill, Trial, TrialResult
from skilleval.errors import HarnessError, UserError
from skilleval.excerpt import make_excerpt
from skilleval.paths import contained
from skilleval import sample_key
from skilleval.sim.protocol import SIM_KEY, hint_value, is_loopback, sample_hint
from skilleval.skill_install import install_skill

_SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")


class ClaudeCliBackend(BaseBackend):
    name = "claude_cli"
    needs_self_check = True
    harness_version = "cli-1"

    def __init__(self, params: ClaudeCliParams) -> None:
        self.params = params
        self.model = params.model
        self.executable = shutil.which(params.executable) or params.executable
        if not os.access(self.executable, os.X_OK):
            raise UserError(f"backend.executable: {params.executable!r} is not an executable "
                            "(install Claude Code, or run .ci/install-claude-cli.sh)")
        self.cli_version = _cli_version(self.executable)
        self.hints = params.sim_hints and is_loopback(params.base_url)
        check_base_url("backend", params.base_url)
        if params.pricing_file:  # read now: a bad file is exit 2 before any call, not
            load_table(params.pricing_file)  # an error on every trial after its call
        check_bounds("backend", params, {"concurrency": 1, "max_turns": 1, "max_retries": 0,
                                         "cli_max_retries": 0, "retry_base_s": 0}, positive=("timeout_s",))
        if params.work_root is not None and not Path(params.work_root).expanduser().is_dir():
            raise UserError(f"backend.work_root={params.work_root}: no such folder (trial projects "
                            "are made inside it)")
        # Processes at once: the usable CPUs while the work is CPU-bound (about 0.45 s of CPU a
        # trial; measured on 2 CPUs against serve-sim, benchmarks/cli_orchestration.py:
        # 3 processes wall x1.045 (CI 1.00-1.09), 8 processes x1.24), more when the API's
        # answer keeps processes waiting (the real API: seconds) -- see cli_gate.
        self.gate = ProcessGate(usable_cpus(), fixed=params.concurrency, meter=IdleMeter())
        self.max_processes = self.gate.cap  # at the start; the least it will be
        # A trial folder is removed in a worker thread, not on the event loop: the CLI's config
        # tree (about 20 entries) took 2-40 ms a trial to remove on a loaded ext4 disk, and while
        # the loop was blocked no freed slot started its next CLI and no running CLI's decision
        # was read. False only for the benchmark's paired comparison
        # (benchmarks/cli_orchestration.py --compare-inline-removal).
        self.removal_off_loop = True

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident.update({"cli_version": self.cli_version, "max_turns": self.params.max_turns,
                      "endpoint": self.params.base_url or "anthropic"})
        return ident

    # -- environment ----------------------------------------------------------------------

    def _env(self, config_dir: Path, trial: Trial | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE"}
        env.update({"CLAUDE_CONFIG_DIR": str(config_dir),
                    "CLAUDE_CODE_DISABLE_BUNDLED_SKILLS": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_MAX_RETRIES": str(self.params.cli_max_retries)})
        if self.params.base_url:
            env["ANTHROPIC_BASE_URL"] = self.params.base_url
            if is_loopback(self.params.base_url) and not any(env.get(k) for k in _SECRET_ENV):
                env["ANTHROPIC_API_KEY"] = SIM_KEY
        hint = (hint_value(trial.repeat, trial.listing) if trial is not None
                else sample_hint(key) if (key := sample_key.current()) is not None else None)
        if self.hints and hint is not None:  # a loopback simulator only
            env["ANTHROPIC_CUSTOM_HEADERS"] = f"x-skilleval-sim: {hint}"
        return env

    def _project(self, trial: Trial) -> Path:
        root = Path(tempfile.mkdtemp(prefix="skilleval-cli-", dir=self.params.work_root))
        leak = _ancestor_claude_dir(root)
        if leak is not None:
            shutil.rmtree(root, ignore_errors=True)
            raise HarnessError(f"{leak} exists above the trial folder {root}; its skills would "
                               "leak into every trial. Set backend.work_root elsewhere.")
        skills_dir = root / "proj" / ".claude" / "skills"
        for skill in trial.skills:  # the user's real folders: every frontmatter key, resources
            install_skill(skill.with_description(_description_under_test(trial, skill)),
                          contained(skills_dir, skill.name))
        installed = {s.name for s in trial.skills}
        bodies = dict(trial.bodies)
        for listed in trial.listing:  # a listing without folders (a caller that has none)
            if listed.name in installed:
                continue
            folder = contained(skills_dir, listed.name)
            folder.mkdir(parents=True)
            body = bodies.get(listed.name) or f"# {listed.name}\n"
            (folder / "SKILL.md").write_text(
                f"---\nname: {listed.name}\ndescription: {json.dumps(listed.description)}\n---\n"
                f"{body if body.endswith(chr(10)) else body + chr(10)}")
        (root / "config").mkdir()
        return root

    def argv(self, trial: Trial) -> list[str]:
        p = self.params
        return [self.executable, "-p", "--output-format", "stream-json", "--verbose",
                "--include-partial-messages", "--model", p.model, "--max-turns", str(p.max_turns),
                "--setting-sources", "project", "--strict-mcp-config", "--no-session-persistence",
                "--settings", TRIAL_SETTINGS, *p.extra_args, "--", trial.query]

    # -- trials -----------------------------------------------------------------------------

    async def run_trial(self, trial: Trial) -> TrialResult:
        # The process slot (`gate.slot`) is taken in `_run_once` around the CLI process alone,
        # from its start to its kill: making and removing the trial folder, a retry's back-off
        # and the killed process's reap happen outside it, so the next CLI starts at once.
        return await self._run_trial(trial)

    async def _run_trial(self, trial: Trial) -> TrialResult:
        start = time.perf_counter()
        retries = 0   # CLI-internal api_retry lines plus our whole-run retries
        reruns = 0
        while True:
            run, status = await self._run_once(trial)
            retries += run.retries
            if (status == "ok" and not run.decided and _retryable(run.api_error_status)
                    and reruns < self.params.max_retries):
                reruns += 1
                retries += 1
                delay = self.params.retry_base_s * 2 ** (reruns - 1) * (0.5 + random.random() / 2)
                await asyncio.sleep(min(delay, 60.0))
                continue
            return self._classify(trial, run, status, start, retries)

    def _classify(self, trial: Trial, run: CliRun, status: str, start: float,
                  retries: int) -> TrialResult:
        outcome: Outcome
        error: str | None = None
        if run.decided:
            outcome = Outcome.TRIGGERED if run.fired == trial.target else Outcome.NOT_TRIGGERED
        elif status == "timeout":
            outcome, error = Outcome.TIMEOUT, f"no decision within {self.params.timeout_s:g} s"
        elif status.startswith("exit"):
            outcome, error = Outcome.ERROR, status
        elif run.result is None:
            outcome = Outcome.ERROR
            error = f"no result line ({run.malformed} malformed lines)"
        elif run.is_error and not run.max_turns_reached:
            outcome, error = Outcome.ERROR, (
                f"api error {run.api_error_status}: {run.error_text()}"
                if run.api_error_status is not None else run.error_text())
        else:
            outcome = Outcome.NOT_TRIGGERED
        tokens, cost = run.priced(self.model, self.params.pricing_file)
        return TrialResult(
            key=trial.key, outcome=outcome, fired=run.fired, position=run.position,
            latency_ms=(time.perf_counter() - start) * 1000, input_tokens=tokens.total_input,
            output_tokens=tokens.output_tokens, cache_read_tokens=tokens.cache_read_tokens,
            cache_write_tokens=tokens.cache_write_5m_tokens + tokens.cache_write_1h_tokens,
            cost_usd=cost, retries=retries, error=_scrub(error),
            backend_version=f"claude-cli/{run.version or self.cli_version}",
            shown=_model_shown(run.shown, trial), excerpt=make_excerpt(run.said))

    async def _run_once(self, trial: Trial) -> tuple[CliRun, str]:
        """One CLI process. Status: ok | timeout | exit N: <stderr tail>."""
        # Made on the loop, unlike its removal: an await between making the folder and the
        # `try` that removes it would let a cancelled trial leave it behind.
        root = self._project(trial)
        run = CliRun()
        try:
            async with self.gate.slot() as release:  # the CLI process's life, up to its kill
                status = await self._run_process(trial, root, run, release)
        finally:
            if not self.params.keep_workdirs:
                await self._remove(root)
        return run, status

    async def _remove(self, root: Path) -> None:
        """Remove a trial folder in a worker thread (see ``removal_off_loop``), so the event
        loop keeps serving the other trials meanwhile. Once started, the removal finishes even
        if the awaiting trial is cancelled."""
        if self.removal_off_loop:
            await asyncio.to_thread(shutil.rmtree, root, True)
        else:
            shutil.rmtree(root, ignore_errors=True)

    async def _run_process(self, trial: Trial, root: Path, run: CliRun,
                           release: Callable[[], Awaitable[None]]) -> str:
        """Start the CLI in the trial folder and read its stream into ``run`` until the
        decision, the end or the timeout. Status: ok | timeout | exit N: <stderr tail>."""
        proc: asyncio.subprocess.Process | None = None
        stderr_task: asyncio.Task[str] | None = None
        status = "ok"
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv(trial), cwd=root / "proj", env=self._env(root / "config", trial),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True, limit=16 * 1024 * 1024)
            stderr_task = asyncio.create_task(_tail(proc.stderr))

            async def read_and_wait() -> int | None:
                assert proc is not None and proc.stdout is not None
                while not run.decided and not run.finished:
                    try:
                        line = await proc.stdout.readline()
                    except ValueError:  # one line over the 16 MiB limit: skipped, counted
                        run.malformed += 1
                        continue
                    if not line:
                        break
                    run.feed(line)
                if run.decided or run.finished:
                    return None
                return await proc.wait()  # stdout closed: the exit code, within the timeout

            spawned = time.monotonic()
            try:
                code = await asyncio.wait_for(read_and_wait(), self.params.timeout_s)
            except TimeoutError:
                status, code = "timeout", None
            if run.decided or run.finished:
                self.gate.observe(time.monotonic() - spawned, run.api_wait_s)
            if code:
                await kill_group(proc)  # a grandchild may still hold stderr open
                try:
                    tail = await asyncio.wait_for(asyncio.shield(stderr_task), 2.0)
                except TimeoutError:
                    tail = ""
                status = f"exit {code}: {tail[-400:].strip()}"
        finally:
            if proc is not None:
                signal_group(proc)
                await release()  # the killed process's teardown needs no CPU slot
                await reap(proc)
            if stderr_task is not None:
                stderr_task.cancel()
        return status

    # -- text ---------------------------------------------------------------------------------

    def worst_cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        return worst_case_usd(self.model, input_tokens, output_tokens, pricing_file=self.params.pricing_file)

    async def execute(self, request: Any) -> Any:
        """Run a functional task: see `skilleval.backends.cli_executor`."""
        from skilleval.backends.cli_executor import execute_via_cli

        async with self.gate.slot():
            return await execute_via_cli(self, request)

    async def complete(self, prompt: str, *, system: str | None = None,
                       max_tokens: int = 2048) -> Completion:
        async with self.gate.slot():
            return await self._complete(prompt, system)

    async def _complete(self, prompt: str, system: str | None) -> Completion:
        start = time.perf_counter()
        root = Path(tempfile.mkdtemp(prefix="skilleval-cli-", dir=self.params.work_root))
        (root / "proj").mkdir()
        (root / "config").mkdir()
        argv = [self.executable, "-p", "--output-format", "json", "--model", self.model,
                "--max-turns", "1", "--tools", "", "--setting-sources", "project",
                "--strict-mcp-config", "--no-session-persistence", "--settings",
                ISOLATION_SETTINGS]
        if system:
            argv += ["--system-prompt", system]
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=root / "proj", env=self._env(root / "config", None),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        spawned = time.monotonic()
        try:
            out, err = await asyncio.wait_for(proc.communicate(prompt.encode()),
                                              self.params.timeout_s)
        except TimeoutError:
            raise HarnessError(f"claude -p gave no answer within {self.params.timeout_s:g} s") from None
        finally:
            await kill_group(proc)
            await self._remove(root)
        try:
            result = json.loads(out.decode("utf-8", "replace").strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            raise HarnessError(f"claude -p exit {proc.returncode}: "
                               f"{_scrub(err.decode('utf-8', 'replace')[-400:])}") from None
        self.gate.observe(time.monotonic() - spawned, reported_api_wait_s(result))
        if result.get("is_error"):
            raise HarnessError(f"claude -p failed: {_scrub(str(result.get('result') or result.get('errors')))}")
        tokens, cost = CliRun(result=result).priced(self.model, self.params.pricing_file)
        return Completion(str(result.get("result") or ""), tokens.total_input, tokens.output_tokens,
                          cost, (time.perf_counter() - start) * 1000)


async def _tail(stream: asyncio.StreamReader | None, keep: int = 4096) -> str:
    buf = b""
    if stream is None:
        return ""
    while chunk := await stream.read(65536):
        buf = (buf + chunk)[-keep:]
    return buf.decode("utf-8", "replace")


def _description_under_test(trial: Trial, skill: Skill) -> str:
    """The listing's description when it is a candidate variant, else the folder's own.

    The listing line carries ``when_to_use`` after the description (`Skill.listed`), so a
    line equal to the folder's own rendering means "unchanged"."""
    line = next((s.description for s in trial.listing if s.name == skill.name), None)
    if line is None or line == skill.listed.description:
        return skill.description
    return line


def _model_shown(init_skills: tuple[str, ...] | None, trial: Trial) -> tuple[str, ...] | None:
    """``system/init.skills`` minus what Claude Code hides from the model: init lists a
    ``disable-model-invocation`` skill that the model's listing leaves out (reference §2.1)."""
    if init_skills is None:
        return None
    hidden = {s.name for s in trial.skills if not s.model_invocable}
    return tuple(n for n in init_skills if n not in hidden)


def _retryable(status: int | None) -> bool:
    """An API error result worth a whole new run: connection trouble (0), 408, 409, 429, 5xx.
    Other 4xx (bad request, auth, not found) fail the same way every time."""
    return status is not None and (status in (0, 408, 409, 429) or status >= 500)


def _ancestor_claude_dir(path: Path) -> Path | None:
    for parent in path.parents:
        candidate = parent / ".claude" / "skills"
        if candidate.is_dir():
            return candidate
    return None


def _cli_version(executable: str) -> str:
    try:
        out = subprocess.run([executable, "--version"], check=False, capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"backend.executable: cannot run {executable} --version: {exc}") from None
    match = re.search(r"\d+\.\d+\.\d+", out)
    return match.group(0) if match else "unknown"


def _scrub(text: str | None) -> str | None:
    """Remove any secret from the environment that an error text might echo."""
    if not text:
        return text
    for name in _SECRET_ENV:
        value = os.environ.get(name)
        if value and len(value) >= 8:
            text = text.replace(value, "[redacted]")
    return re.sub(r"sk-ant-[A-Za-z0-9_\-]{8,}", "sk-ant-[redacted]", text)
