"""Arms (configurations) of a functional eval, their roles, and the equal-arms audit.

Arms: ``with_skill`` (the skill under test), ``new_skill`` (same), ``without_skill`` (no skill)
and ``old_skill`` (a snapshot folder given by ``functional.old_skill``). The *delta* is always
primary minus baseline, chosen by role, never by folder-name order (skill-creator B11):
``with_skill``/``new_skill`` are primary, ``without_skill``/``old_skill`` baseline, unless
``functional.primary`` / ``functional.baseline`` name other arms.

Every arm's effective settings (model, tools, permissions, system prompt, caps, skills listed)
are recorded, and the run fails with exit 2 when arms differ in anything but the skills.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from skilleval.domain import Skill
from skilleval.errors import UserError
from skilleval.execution import ArmSettings

PRIMARY_NAMES = ("with_skill", "new_skill")
BASELINE_NAMES = ("without_skill", "old_skill")


@dataclass(frozen=True)
class Arm:
    name: str
    role: str  # primary | baseline | other
    skill: Skill | None
    settings: ArmSettings


def assign_roles(names: list[str], primary: str | None = None,
                 baseline: str | None = None) -> dict[str, str]:
    if len(set(names)) != len(names):
        raise UserError(f"functional.arms lists an arm twice: {names}")
    p = primary or next((n for n in PRIMARY_NAMES if n in names), None)
    b = baseline or next((n for n in BASELINE_NAMES if n in names and n != p), None)
    for label, v in (("primary", p), ("baseline", b)):
        if v is not None and v not in names:
            raise UserError(f"functional.{label}={v!r} is not one of functional.arms {names}")
    if p is None or b is None or p == b:
        raise UserError(f"cannot tell primary from baseline among arms {names}; "
                        "set functional.primary and functional.baseline")
    return {n: ("primary" if n == p else "baseline" if n == b else "other") for n in names}


def build_arms(names: list[str], skill: Skill, base: ArmSettings, *,
               load_skill: Callable[[Path], Skill], old_skill: str | None = None,
               overrides: dict[str, dict[str, Any]] | None = None,
               primary: str | None = None, baseline: str | None = None) -> list[Arm]:
    roles = assign_roles(list(names), primary, baseline)
    overrides = overrides or {}
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise UserError(f"functional.arm_overrides names arms not in functional.arms: {unknown}")
    arms = []
    for name in names:
        if name in ("with_skill", "new_skill"):
            arm_skill: Skill | None = skill
        elif name == "without_skill":
            arm_skill = None
        elif name == "old_skill":
            if not old_skill:
                raise UserError("arm old_skill needs functional.old_skill=<path to the old skill folder>")
            arm_skill = load_skill(Path(old_skill))
        else:
            raise UserError(f"unknown arm {name!r}; valid: with_skill, new_skill, without_skill, old_skill")
        settings = replace(base, skills=() if arm_skill is None else (
            (arm_skill.name, arm_skill.description, arm_skill.content_hash),))
        ov = dict(overrides.get(name) or {})
        if "tools" in ov:
            ov["tools"] = tuple(ov["tools"])
        bad = sorted(set(ov) - set(ArmSettings.__dataclass_fields__) | ({"skills"} & set(ov)))
        if bad:
            raise UserError(f"functional.arm_overrides.{name}: unknown or forbidden keys {bad}")
        settings = replace(settings, **ov)
        arms.append(Arm(name, roles[name], arm_skill, settings))
    return arms


def settings_diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Keys (other than `skills`) whose values differ between two settings dicts."""
    keys = (set(a) | set(b)) - {"skills"}
    return sorted(k for k in keys if a.get(k) != b.get(k))


def check_equal(settings: dict[str, dict[str, Any]], *, when: str = "configured") -> None:
    """Raise UserError naming every setting that differs between arms (skills excepted)."""
    names = list(settings)
    problems = []
    for other in names[1:]:
        for k in settings_diff(settings[names[0]], settings[other]):
            problems.append(f"{k}: {names[0]}={settings[names[0]].get(k)!r} vs "
                            f"{other}={settings[other].get(k)!r}")
    if problems:
        raise UserError(f"arms differ in more than the skill ({when}): " + "; ".join(problems)
                        + " (a functional A/B is only fair when everything but the skill is equal)")
