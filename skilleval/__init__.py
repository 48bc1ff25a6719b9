"""skilleval: measure and improve Claude Agent Skills.

The public surface for plugin authors and scripts; everything else is internal.
"""
from skilleval.backends.base import Backend, BaseBackend
from skilleval.domain import (Completion, ListedSkill, Outcome, Skill, Trial, TrialResult,
                              TriggerCase)
from skilleval.errors import HarnessError, SkillevalError, UserError
from skilleval.hookspecs import hookimpl, hookspec

__all__ = [
    "Backend", "BaseBackend", "Completion", "HarnessError", "ListedSkill", "Outcome", "Skill",
    "SkillevalError", "Trial", "TrialResult", "TriggerCase", "UserError", "hookimpl", "hookspec",
]
__version__ = "0.1.0"
