"""A plugin backend's cache identity includes the plugin that made it."""
from __future__ import annotations

from typing import Any


def key_the_plugin(backend: Any, reg: Any) -> None:
    """A plugin backend's identity names the plugin, its version and the name it is
    registered under. The identity keys every cached trial and execution, and a plugin's own
    ``identity()`` may not change when its behaviour does (a new release) or may be
    ``BaseBackend``'s ``{"backend": "base", "model": "unknown"}`` for two different backends:
    both reused each other's cached answers. Built-ins carry their harness versions."""
    if reg.distribution == "skilleval":
        return
    own = backend.identity

    def identity() -> dict[str, Any]:
        return {**own(), "plugin": f"{reg.distribution}=={reg.version}", "registered_as": reg.name}
    try:
        backend.identity = identity
    except AttributeError:  # a backend whose attributes are fixed (slots): keyed by its own
        pass
