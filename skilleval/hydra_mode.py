"""Skip Hydra's second composition of the config when the mode is known from the command line.

Hydra 1.3's ``_run_hydra`` composes the whole config twice per run: once in
``Hydra.get_mode`` only to read ``hydra.mode``, then again to run. Composition costs about
0.1 s, paid by every ``skilleval`` start. skilleval's own configs never set ``hydra.mode``,
so ``get_mode`` returns None and Hydra takes the mode from ``-m`` / ``--multirun``, which is
what returning None here does without composing. The shortcut applies only when the command
line cannot change that answer: no ``hydra.mode`` override and no other config folder or
primary config (``--config-dir``, ``--config-path``, ``--config-name``); otherwise Hydra's
own ``get_mode`` runs. Hand-written because Hydra has no option for it; ``get_mode`` is a
private method (hydra-core is pinned below 1.4, and the tests run both paths).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

_OTHER_CONFIG = ("--config-dir", "-cd", "--config-path", "-cp", "--config-name", "-cn")


def mode_is_from_flags(args: Sequence[str]) -> bool:
    """True when ``hydra.mode`` can only come from -m / --multirun for these arguments."""
    return not any("hydra.mode" in a or a.split("=", 1)[0] in _OTHER_CONFIG for a in args)


@contextmanager
def single_composition(args: Sequence[str]) -> Iterator[None]:
    if not mode_is_from_flags(args):
        yield
        return
    from hydra._internal.hydra import Hydra

    original = Hydra.get_mode
    Hydra.get_mode = lambda self, config_name, overrides: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        Hydra.get_mode = original  # type: ignore[method-assign]
