"""What trigger_opt reads before it plans: the skill, its eval set and, with
``optimize.apply=true``, whether SKILL.md can be written back. Also the experiment's
``check_inputs`` (``hookspecs.register_experiments``), so a bad one is refused (exit 2)
before the run's row is stored, not found after a 'failed' run is left in the store."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilleval.domain import Skill, TriggerCase
from skilleval.optimize.plan import OptimizeSettings
from skilleval.optimize.splitters import check_two_classes

if TYPE_CHECKING:
    from skilleval.app import JobContext


def opt_inputs(job: "JobContext", opt: OptimizeSettings) -> tuple[Skill, list[TriggerCase]]:
    skill = job.load_skill()
    if opt.apply:
        from skilleval.optimize.apply import preflight

        preflight(job, skill)
    cases = job.load_cases(skill)
    check_two_classes(cases, f"the eval set {job.cases_path(skill)}")
    if opt.apply:
        from skilleval.optimize.apply import preflight_split

        preflight_split(job, cases)
    return skill, cases


def check_opt_inputs(job: Any) -> tuple[Skill, list[TriggerCase]]:
    """Kept as ``job.prepared``: `Optimizer.prepare` reuses it."""
    return opt_inputs(job, OptimizeSettings.from_cfg(job.cfg.get("optimize")))
