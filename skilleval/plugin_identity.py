"""A plugin component's cache identity includes the plugin that made it and its settings."""
from __future__ import annotations

import hashlib
import json
from typing import Any


def key_the_plugin(component: Any, reg: Any, params: dict[str, Any] | None = None) -> None:
    """A plugin component's ``identity()`` (a backend's, a judge's) also names the plugin, its
    version, the name it is registered under and a digest of the settings it was built with.

    The identity keys every cached trial, execution and grade, and a plugin's own
    ``identity()`` may not change when its behaviour does: a new release, or the same judge
    configured with other params (both reused each other's cached answers or grades), or may
    be ``BaseBackend``'s ``{"backend": "base", "model": "unknown"}`` for two different
    backends. The settings enter as a digest, not as values: a plugin's params may hold a
    credential, and identities are stored. Built-ins carry their own versions and settings."""
    own = getattr(component, "identity", None)
    if reg.distribution == "skilleval" or not callable(own):
        return
    extra: dict[str, Any] = {"plugin": f"{reg.distribution}=={reg.version}", "registered_as": reg.name}
    if params:
        text = json.dumps(params, sort_keys=True, default=str)
        extra["params_digest"] = hashlib.sha256(text.encode()).hexdigest()[:16]

    def identity() -> dict[str, Any]:
        return {**own(), **extra}
    try:
        component.identity = identity
    except AttributeError:  # a component whose attributes are fixed (slots): keyed by its own
        pass
