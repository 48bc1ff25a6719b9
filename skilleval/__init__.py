"""skilleval: measure and improve Claude Agent Skills.

The public surface for plugin authors and scripts; everything else is internal.
"""
import importlib.util as _ilu
import sys as _sys
from pathlib import Path as _Path


def _map_source_checkout() -> None:
    """pyproject maps ``conf/`` to ``skilleval.conf`` and ``experiments/`` to
    ``skilleval.examples``. Imported from a source checkout (``python benchmarks/x.py``,
    ``python -m skilleval.cli`` in the repo) next to a non-editable install, the package is
    this folder, which holds neither, and Hydra fails with "Primary config module
    'skilleval.conf' not found". Map them here the way the install does."""
    here = _Path(__file__).resolve().parent
    for sub, folder in (("conf", "conf"), ("examples", "experiments")):
        name, init = f"{__name__}.{sub}", here.parent / folder / "__init__.py"
        if (here / sub).is_dir() or name in _sys.modules or not init.is_file():
            continue
        spec = _ilu.spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])
        if spec is None or spec.loader is None:
            continue
        module = _ilu.module_from_spec(spec)
        _sys.modules[name] = module
        spec.loader.exec_module(module)


if (_Path(__file__).resolve().parent.parent / "pyproject.toml").is_file():
    _map_source_checkout()

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
