"""``optimize.apply=true``: write the best description into SKILL.md (backup kept)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from skilleval.domain import Skill
from skilleval.errors import HarnessError
from skilleval.skills import validate_skill, write_description
from skilleval.terminal import safe

if TYPE_CHECKING:
    from skilleval.app import JobContext


def apply_description(job: "JobContext", skill: Skill, description: str) -> None:
    if description == skill.description:
        job.console.print("optimize.apply: the original description is still the best; SKILL.md unchanged")
        return
    md = skill.path / "SKILL.md"
    backup = write_description(skill.path, description)
    errors = [p for p in validate_skill(skill.path) if p.level == "error"]
    if errors:  # restore: never leave a skill that fails validation behind
        md.write_bytes(backup.read_bytes())
        raise HarnessError(f"{md}: the new description failed validation ({errors[0].message}); "
                           f"SKILL.md restored from {backup}")
    job.console.print(f"optimize.apply: wrote the best description to {safe(md)} (backup: {safe(backup.name)})")
