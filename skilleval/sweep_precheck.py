"""Check every job of a sweep before the first one starts.

Hydra composes a job's config only when its launcher starts it, so in
``skilleval -m +experiment=trigger_eval trigger.threshold=0.3,1.5`` the bad cell was refused
only after the good one had run (and, on a real backend, paid). Hydra calls
``on_multirun_start`` before its sweeper launches anything; here every job's overrides are
expanded the way Hydra's basic sweeper does (``BasicSweeper.split_arguments``), each job's
config is composed with the same config loader, and the call-free checks a job makes before it
opens the store (``config_checks``: values, ranges, the skill and distractor folders) run on
it, its backend is built (its parameters checked) and closed, once per distinct backend,
and its gates are checked against the experiment. Any failing job stops the sweep before it starts: exit 2, one line with each distinct
problem and the jobs it is in (with the swept values of a single job).

Composing costs about 0.1 s a job; a sweep larger than ``MAX_JOBS`` is checked on its first
``MAX_JOBS`` jobs only, and the line before the first job says so (checking a 1,000-job sweep
would take minutes before it began).
"""
from __future__ import annotations

import sys
from typing import Any

from hydra.experimental.callback import Callback

#: the most jobs checked before a sweep starts (see the module docstring)
MAX_JOBS = 200


def job_overrides(config: Any) -> list[list[str]]:
    """Each job's overrides, in Hydra's job order (what the basic sweeper would launch)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    loader = GlobalHydra.instance().config_loader()
    params = config.hydra.sweeper.get("params") or {}
    arguments = [f"{k}={v}" for k, v in params.items()]
    arguments += list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
    parsed = OverridesParser.create(config_loader=loader).parse_overrides(arguments)
    return [list(job) for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]


def check_jobs(config: Any) -> None:
    """Raise UserError, before any job starts, when a job's config fails a check: one line
    with each distinct problem and the jobs it is in."""
    from hydra.core.global_hydra import GlobalHydra

    from skilleval.config_checks import check_job_config, check_skill_folders
    from skilleval.errors import UserError

    loader = GlobalHydra.instance().config_loader()
    jobs = job_overrides(config)
    if len(jobs) > MAX_JOBS:
        print(f"skilleval: checking the first {MAX_JOBS} of {len(jobs)} sweep jobs before the "
              "first starts; the others are checked when each starts", file=sys.stderr)
    elif len(jobs) > 20:  # about 0.1 s a job: a long pause would otherwise say nothing
        print(f"skilleval: checking {len(jobs)} sweep jobs before the first starts",
              file=sys.stderr)
    failures: dict[str, list[int]] = {}  # message -> the jobs it is in, in job order
    backends: dict[str, str | None] = {}  # a backend config -> its problem (built once each)
    for num, overrides in enumerate(jobs[:MAX_JOBS]):
        cfg = loader.load_sweep_config(config, overrides)
        try:
            check_job_config(cfg)
            check_skill_folders(cfg)
            problem = _backend_problem(cfg.get("backend"), backends)
            if problem is not None:
                raise UserError(problem)
            _check_gates(cfg)
        except UserError as exc:
            failures.setdefault(str(exc), []).append(num)
    if failures:
        parts = [f"{message} ({_where(nums, jobs)})" for message, nums in failures.items()]
        raise UserError("; ".join(parts) + "; no job was started")


def _backend_problem(node: Any, seen: dict[str, str | None]) -> str | None:
    """Build the job's backend as the job would (its parameters' types and ranges are checked
    there), once per distinct backend config, and close it: no call is made."""
    import asyncio

    from omegaconf import OmegaConf

    from skilleval.errors import UserError
    from skilleval.registry import default_registry

    if node is None:
        return None
    text = OmegaConf.to_yaml(node)
    if text not in seen:
        try:
            backend = default_registry().build("backend", node)
        except UserError as exc:
            seen[text] = str(exc)
        else:
            seen[text] = None
            if hasattr(backend, "aclose"):
                asyncio.run(backend.aclose())
    return seen[text]


def _check_gates(cfg: Any) -> None:
    """The gates' values, and that the experiment measures them (a named baseline run is
    looked up when the job starts: that needs the store)."""
    from skilleval.gates import check_supported
    from skilleval.registry import default_registry

    exp = cfg.get("experiment")
    if exp and exp.get("kind"):
        experiment = default_registry().build("experiment", {"name": exp.kind})
        check_supported(cfg, experiment, exp.get("name", exp.kind))


def _where(nums: list[int], jobs: list[list[str]]) -> str:
    if len(nums) == len(jobs):
        return "both sweep jobs" if len(jobs) == 2 else f"all {len(jobs)} sweep jobs"
    if len(nums) == 1:
        varied = [o for o in jobs[nums[0]] if sum(o in j for j in jobs) < len(jobs)]
        return f"sweep job #{nums[0]} of {len(jobs)}: {' '.join(varied)}"
    return f"sweep jobs {', '.join(f'#{n}' for n in nums)} of {len(jobs)}"


class SweepRefused(BaseException):
    """Carries a job's UserError out of Hydra: Hydra turns an ``Exception`` raised by a
    callback into a warning and goes on with the sweep, so this is a ``BaseException``; the
    CLI unwraps it (exit 2, one line)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class SweepPrecheckCallback(Callback):
    """Hydra calls this before a multirun's first job (``hydra.callbacks`` in config.yaml)."""

    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        from skilleval.errors import UserError

        if not str(config.hydra.sweeper.get("_target_", "")).endswith("BasicSweeper"):
            return  # another sweeper chooses its jobs as it goes
        try:
            check_jobs(config)
        except UserError as exc:
            raise SweepRefused(exc) from None
