"""The Hydra job: from a composed config to a finished, stored, reported experiment.

`run_job(cfg)` builds the job's parts by name from the plugin registry (DESIGN §5), records
the run in the store, and hands a `JobContext` to the experiment named by
`experiment.kind`. Experiments are plugins too (``register_experiments``).
"""
from __future__ import annotations

import asyncio
import hashlib
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Coroutine, Iterator, TypeVar

from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from skilleval.backends.base import Backend
from skilleval.budget import Budget
from skilleval.config_checks import check_job_config, check_skill_folders, open_store_root
from skilleval.interrupts import caused_by_interrupt
from skilleval.checks import checked_number  # noqa: F401  (also imported from here)
from skilleval.datasets import default_cases_path, load_trigger_cases
from skilleval.domain import Skill, TriggerCase
from skilleval.errors import BudgetExhausted, HarnessError, UserError
from skilleval.events import JobEnd, JobStart
from skilleval.progress import LiveProgress, PlainProgress
from skilleval.registry import Registry
from skilleval.run_row import write_run_row
from skilleval.skills import description_problems, load_skill
from skilleval.store.liveness import run_lease
from skilleval.terminal import RunConsole, safe
from skilleval.sweep_table import FINISHED, JobOutcome
from skilleval.trigger.policies import TriggerSettings

if TYPE_CHECKING:  # imported where used: a config refused before the run needs no pyarrow
    from skilleval.store.catalog import Store
    from skilleval.trigger.runner import TrialRunner

T = TypeVar("T")
CLOSE_WAIT_S = 10.0  # what closing a job waits for the tasks it cancels


@dataclass
class JobContext:
    """Everything an experiment needs, built once per Hydra job."""

    cfg: DictConfig
    registry: Registry
    store: Store
    run_id: str
    sweep_id: str
    job_num: int
    experiment: str
    output_dir: Path
    backend: Backend
    budget: Budget | None
    # soft_wrap: status lines stay whole in CI logs and pipes (no wrapping at 80 columns)
    console: Console = field(default_factory=lambda: RunConsole(stderr=True, soft_wrap=True))
    out: Console = field(default_factory=RunConsole)
    overrides: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    variant: Any = None  # skilleval.variants.source.Choice, set by run_job
    prepared: Any = None  # what the experiment's check_inputs built, for the run to reuse
    description_hash: str = ""
    timing: dict[str, float] = field(default_factory=dict)
    _progress: Progress | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _executor: Any = None
    executor_built: Any = None  # built (so checked) at job start, started on first use
    runners: list[Any] = field(default_factory=list)  # every TrialRunner new_runner made

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the job's one event loop.

        Why one loop per job: async clients (the anthropic SDK's connection pool) bind to
        the loop that opened them; a second ``asyncio.run`` would hand them a dead loop.
        """
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def close(self) -> None:
        """Close the backend on the job's loop, then the loop."""
        try:
            if self._loop is not None:  # after Ctrl-C: stop the workers it left behind
                pending = asyncio.all_tasks(self._loop)
                for task in pending:
                    task.cancel()
                if pending:  # bounded: a task cancelled while its subprocess was being spawned
                    # never finished, and waiting for it hung the job after its results were out
                    self._loop.run_until_complete(asyncio.wait(pending, timeout=CLOSE_WAIT_S))
            if self._executor is not None:
                executor, self._executor = self._executor, None
                self.run(executor.aclose())
            self.run(self.backend.aclose())
        finally:
            loop, self._loop = self._loop, None
            if loop is not None:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

    # -- inputs -------------------------------------------------------------------------

    def load_skill(self, key: str = "skill") -> Skill:
        """The skill under test, with the job's description variant (if any) applied."""
        path = self.cfg.get(key)
        if not path:
            raise UserError(f"no skill given: pass {key}=PATH to a skill folder")
        skill = load_skill(path)
        if key == "skill":
            from skilleval.variants.source import description_hash

            if self.variant.description is not None:
                skill = skill.with_description(self.variant.description)
            elif not self.description_hash:  # measured as written, but not silently (once per job)
                for problem, consequence in description_problems(skill.description):
                    self.console.print(
                        f"[yellow]warning:[/yellow] {safe(path)}: {problem} (the Agent Skills "
                        f"spec; validate fails it); measured as written, but {consequence}")
            self.description_hash = description_hash(skill.description)
            self.summary.update(variant=self.variant.name, description_hash=self.description_hash)
        return skill

    def cases_path(self, skill: Skill) -> Path:
        cases = self.cfg.get("cases")
        return Path(cases).expanduser() if cases else default_cases_path(skill.path)

    def load_cases(self, skill: Skill) -> list[TriggerCase]:
        return load_trigger_cases(self.cases_path(skill))

    def load_distractors(self) -> list[Skill]:
        from skilleval.config_checks import check_skill_lists

        check_skill_lists(self.cfg)
        return [load_skill(p) for p in (self.cfg.get("distractors") or [])]

    # -- parts --------------------------------------------------------------------------

    def build(self, kind: str, node: Any) -> Any:
        return self.registry.build(kind, node)

    def identity_row(self) -> dict[str, Any]:
        from skilleval.store.schema import SCHEMA_VERSION

        return {"run_id": self.run_id, "sweep_id": self.sweep_id, "job_num": self.job_num,
                "experiment": self.experiment, "schema_version": SCHEMA_VERSION}

    def trigger_settings(self, **overrides: Any) -> TriggerSettings:
        t = self.cfg.trigger
        values = dict(runs=t.runs, threshold=t.threshold, policy=t.policy, max_runs=t.max_runs,
                      min_valid=t.min_valid, concurrency=t.concurrency, confidence=t.confidence)
        if "policy" in overrides and overrides["policy"] != t.policy:  # said, not silently dropped
            self.console.print(f"[yellow]note: trigger.policy={safe(t.policy)} is not used: "
                               f"{safe(self.experiment)} needs the {overrides['policy']} policy[/yellow]")
        values.update(overrides)
        for name in ("runs", "max_runs", "min_valid", "concurrency"):
            values[name] = checked_number(f"trigger.{name}", values[name], int)
        for name in ("threshold", "confidence"):
            values[name] = checked_number(f"trigger.{name}", values[name], float)
        if values["runs"] < 1:
            raise UserError(f"trigger.runs must be at least 1, got {values['runs']}")
        if not 0 < values["threshold"] <= 1:
            raise UserError(f"trigger.threshold must be in (0, 1], got {values['threshold']}")
        return TriggerSettings(**values)

    def executor(self) -> Any:
        """The job's trial executor (`executor=local|ray|...`), built and started once."""
        if self._executor is None:
            executor = self.executor_built or self.build("executor", self.cfg.get("executor") or "local")
            executor.start(self.backend, OmegaConf.to_container(self.cfg.backend, resolve=True))
            self._executor = executor
        return self._executor

    def new_runner(self, settings: TriggerSettings | None = None) -> TrialRunner:
        from skilleval.trigger.runner import TrialRunner, trial_rows_recorder

        writer = self.store.writer("trials", self.experiment, self.run_id)
        recorder = trial_rows_recorder(writer, self.identity_row(), self.backend)
        runner = TrialRunner(self.backend, settings=settings or self.trigger_settings(),
                             store=self.store, recorder=recorder, budget=self.budget,
                             progress=LiveProgress(lambda: self._progress),
                             executor=self.executor(), flush=writer.flush)
        self.runners.append(runner)  # their cache hits, for a run stopped before its totals
        return runner

    def reporters(self) -> list[Any]:
        nodes = self.cfg.get("reporter") or {}
        return [self.build("reporter", node) for node in nodes.values()]

    def report(self, kind: str, payload: Any) -> None:
        """Every reporter writes. One that raises (a plugin's bug, a full disk) is said in one
        line and the others still write: it stopped the run with a traceback, before
        results.json, with every trial measured. The job then exits 3 (a report is missing)."""
        from skilleval.errors import SkillevalError
        from skilleval.terminal import visible_line

        for reporter in self.reporters():
            try:
                reporter.report(self, kind, payload)
            except SkillevalError:
                raise
            except Exception as exc:  # noqa: BLE001 - said, counted, the run goes on
                name = getattr(reporter, "name", type(reporter).__name__)
                line = f"reporter {name} failed: {type(exc).__name__}: {exc}"
                self.summary.setdefault("reporter_errors", []).append(line)
                print(f"skilleval: error: {visible_line(line)}", file=sys.stderr)

    @contextmanager
    def progress(self) -> Iterator[Any]:
        """A progress display on stderr for the duration of the block (runners pick it up):
        a bar in a terminal, a plain line every `progress_every` seconds otherwise."""
        enabled = bool(self.cfg.get("progress", True))
        prog: Any
        if enabled and not self.console.is_terminal:
            prog = PlainProgress(self.console, float(self.cfg.get("progress_every", 10.0) or 10.0),
                                 self.experiment)
        else:
            prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=self.console, transient=True,
                            disable=not enabled)
        self._progress = prog
        try:
            with prog:
                yield prog
        finally:
            self._progress = None


def sweep_identity() -> tuple[str, int, list[str], Path]:
    from hydra.core.hydra_config import HydraConfig

    hc = HydraConfig.get()
    output_dir = Path(hc.runtime.output_dir)
    job_num = int(hc.job.get("num", 0) or 0)
    overrides = list(hc.overrides.task)
    if str(hc.mode) == "RunMode.MULTIRUN":
        sweep_id = hashlib.sha256(str(Path(hc.sweep.dir).resolve()).encode()).hexdigest()[:16]
    else:
        sweep_id = ""
    return sweep_id, job_num, overrides, output_dir


def new_run_id() -> str:
    """Unique, and sorted by start to the second: a timestamp prefix, then a random suffix that
    separates runs (and orders those started in the same second at random: order runs by the
    ``runs`` table's ``ts``, as `latest` and the viewer do)."""
    return time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:10]


_HINTED: set[str] = set()  # stores whose compaction hint this process has printed


def run_job(cfg: DictConfig, registry: Registry, pm: Any) -> int:
    """Run one Hydra job; returns its exit code."""
    exp = cfg.get("experiment")
    if not exp or not exp.get("kind"):
        names = ", ".join(registry.names("experiment"))
        raise UserError(f"no experiment chosen: run `skilleval +experiment=NAME` with NAME one of: {names}")
    check_job_config(cfg)  # before the store opens or any call is made
    check_skill_folders(cfg)
    run_id = new_run_id()
    sweep_id, job_num, overrides, output_dir = sweep_identity()
    sweep_id = sweep_id or run_id
    from skilleval.store.catalog import Store
    from skilleval.store.pandas_probe import skip_pandas_probe

    skip_pandas_probe()  # before the store's first conversion (pandas, if installed: ~0.5 s)
    store_cfg = cfg.store
    store = Store(open_store_root(store_cfg.get("root")),
                  flush_rows=int(store_cfg.flush_rows), flush_seconds=float(store_cfg.flush_seconds))
    backend = registry.build("backend", cfg.backend)
    if hasattr(backend, "use_store"):  # optional in the protocol; BaseBackend has it
        backend.use_store(store.root)
    budget_cfg = cfg.get("budget") or {}
    budget = Budget(checked_number("budget.max_calls", budget_cfg.get("max_calls"), int, none=True),
                    checked_number("budget.max_usd", budget_cfg.get("max_usd"), float, none=True))
    from skilleval.variants.source import choose

    variant = choose(cfg)  # every variant validated before any call (exit 2 names it)
    experiment = registry.build("experiment", {"name": exp.kind})
    from skilleval.gates import check_supported, report_unchecked, run_gates

    gates = check_supported(cfg, experiment, exp.get("name", exp.kind), store)
    job = JobContext(cfg, registry, store, run_id, sweep_id, job_num, exp.get("name", exp.kind),
                     output_dir, backend, budget, overrides=overrides, variant=variant)
    job.executor_built = registry.build("executor", cfg.get("executor") or "local")
    from skilleval.reporting.applies import check_reporters

    check_reporters({key: job.build("reporter", node) for key, node in (cfg.get("reporter") or {}).items()},
                    experiment, job.experiment, gates.active)
    check_inputs(job, experiment)
    # What answered (and, for a calibrated backend like `embed`, its fit) travels with the run.
    job.summary["backend_identity"] = backend.identity()
    output_dir.mkdir(parents=True, exist_ok=True)
    runs = store.writer("runs", job.experiment, run_id)
    lease = run_lease(store.root, run_id)  # held while we live: a killed run shows as stale
    write_run_row(job, runs, "running")
    pm.hook.on_job_start(event=JobStart(run_id, job.experiment, OmegaConf.to_container(cfg, resolve=False),
                                        output_dir))
    status, code = "failed", 1
    try:
        code = experiment(job)
        if code == 0 and gates.active:
            code = run_gates(job, gates)
        if code == 0 and job.summary.get("reporter_errors"):  # measured, but a report is missing
            code = HarnessError.exit_code
        status = {0: "done", 1: "gate_failed", 3: "harness_error"}.get(code, "failed")
        if code == 3 and any(g.get("unmeasured") for g in job.summary.get("gates") or []):
            status = "gate_unchecked"  # measured in full; a gated figure was undefined
        if budget.stopped and code in (0, 3, 4):  # never silent, whatever caught the stop
            code, status = _budget_stop(job, budget.stopped), "budget_stopped"
        return code
    except BudgetExhausted as exc:
        status = "budget_stopped"
        return _budget_stop(job, budget.stopped or str(exc))
    except HarnessError as exc:
        if not budget.stopped:
            status = "harness_error"
            if gates.active and "gates" not in job.summary:  # a CI page must not read "no gates"
                report_unchecked(job, gates, str(exc))
            raise
        print(f"skilleval: {exc}", file=sys.stderr)
        status = "budget_stopped"
        return _budget_stop(job, budget.stopped)
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    except Exception as exc:
        if not caused_by_interrupt(exc):  # a Ctrl-C that DuckDB turned into its own error
            raise
        status = "interrupted"
        raise KeyboardInterrupt from None
    finally:
        store.close()
        hint = store.compact_hint(int(store_cfg.get("compact_hint_parts", 0) or 0))
        if hint and store.url not in _HINTED:  # once per store: a sweep's jobs share a process
            _HINTED.add(store.url)
            print(hint, file=sys.stderr)
        write_run_row(job, runs, status)
        runs.close()
        if lease is not None:
            lease.release()
        job.close()
        pm.hook.on_job_end(event=JobEnd(run_id, job.experiment, status, output_dir, job.summary))
        FINISHED.append(JobOutcome(job_num, run_id, sweep_id, job.experiment, status, overrides, job.summary))


def check_inputs(job: JobContext, experiment: Any) -> None:
    """Bad input is refused (exit 2) before the run's row is stored: a mistyped eval set must
    not leave a failed run in the store and the viewer. Whatever the experiment reads
    (``check_inputs``, see ``hookspecs.register_experiments``); the skill and the distractors
    were checked before the store opened (``config_checks.check_skill_folders``)."""
    extra = getattr(experiment, "check_inputs", None)
    if extra is not None:
        job.prepared = extra(job)


def _budget_stop(job: JobContext, why: str) -> int:
    """A budget stop is never silent: one line on stderr, the summary marked, exit 4."""
    job.summary["budget_stop"] = why
    print(f"skilleval: budget stop: {why}; what was measured before it is stored and "
          "reported as partial (exit 4)", file=sys.stderr)
    return BudgetExhausted.exit_code
