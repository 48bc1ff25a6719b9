"""Let Hydra's per-lookup copy of its config repository share the ConfigStore.

Hydra 1.3 deep-copies its whole config repository (``CachingConfigRepository.__init__``) for
every composition and for every group it lists. The repository's structured-config source
holds the process-wide ``ConfigStore``: Hydra's own nodes (launchers, sweepers, logging) and
one typed node per skilleval plugin option. `skilleval --help` lists every group, about 120
copies of all of it, which cost seconds (and every run pays one). The copy is there so that
re-initialising the sources leaves the original repository alone; nothing reaches the store's
contents through a copied source, since ``ConfigStore.load`` hands out a deep copy of each
node it loads. So within the block a deep copy of the store is the store itself, as befits a
singleton (`Singleton.get_state`, which launchers pickle for their workers, still carries
all of it). Hand-written because Hydra has no option for it; hydra-core is pinned below 1.4,
and `--help`, runs and sweeps all go through this in the tests.

Why the store's class and not the source's: Hydra's plugin discovery re-executes the
modules under ``hydra._internal.core_plugins``, so a patch on ``StructuredConfigSource``
would be lost with the class it was made on.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def shared_config_store() -> Iterator[None]:
    """Within the block, ``copy.deepcopy`` of the ConfigStore returns the one ConfigStore."""
    from hydra.core.config_store import ConfigStore

    def itself(self: ConfigStore, memo: dict[int, Any]) -> ConfigStore:
        return self

    had = ConfigStore.__dict__.get("__deepcopy__")
    ConfigStore.__deepcopy__ = itself  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if had is None:
            del ConfigStore.__deepcopy__  # type: ignore[attr-defined]
        else:
            ConfigStore.__deepcopy__ = had  # type: ignore[attr-defined]
