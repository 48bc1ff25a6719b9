"""Name -> factory registry, fed by plugin hooks and published to Hydra's ConfigStore.

Every component a job uses is built here, by kind and name, from a registration made
through a hook in `skilleval.hookspecs`. Built-ins come in through the same entry points as
third-party plugins, so this module knows no component by name.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import typing
from dataclasses import dataclass, field, make_dataclass
from functools import lru_cache
from importlib import metadata
from typing import Any, Callable

import pluggy

from skilleval import hookspecs
from skilleval.hookspecs import Register  # noqa: F401 - re-exported: plugins import it from here
from skilleval.errors import UserError

# kind -> name of the registration hook that feeds it
KINDS: dict[str, str] = {
    "backend": "register_backends",
    "splitter": "register_splitters",
    "reporter": "register_reporters",
    "proposer": "register_proposers",
    "judge": "register_judges",
    "executor": "register_executors",
    "experiment": "register_experiments",
}
# Kinds selected through a YAML group of their own rather than a ConfigStore node.
_UNPUBLISHED = {"experiment"}
# Kinds where several options can be selected at once; each nests under its own key.
_MULTI = {"reporter"}


@dataclass(frozen=True)
class Registration:
    kind: str
    name: str
    factory: Callable[..., Any] | str  # a callable, or "module:attribute" imported on build
    params: type | None
    help: str
    plugin: str  # plugin (module) name
    distribution: str  # installed distribution that provided it
    version: str


@dataclass
class Registry:
    entries: dict[tuple[str, str], Registration] = field(default_factory=dict)
    #: one line per name two plugins both registered (the first stays): a run refuses to
    #: start (`require_unique`), while ``--help`` and ``skilleval plugins`` still answer and
    #: show the clash (raising here took both down with the run)
    clashes: list[str] = field(default_factory=list)

    def add(self, reg: Registration) -> None:
        key = (reg.kind, reg.name)
        if key in self.entries:
            prev = self.entries[key]
            self.clashes.append(f"{reg.kind} {reg.name!r} is registered twice: by {prev.plugin} "
                                f"({prev.distribution}) and by {reg.plugin} ({reg.distribution})")
            return
        self.entries[key] = reg

    def require_unique(self) -> None:
        """UserError (exit 2) when two plugins registered one name: which one a run would use
        is not the user's choice."""
        if self.clashes:
            more = f" (and {len(self.clashes) - 1} more clash(es): skilleval plugins)" if len(self.clashes) > 1 else ""
            raise UserError(self.clashes[0] + more)

    def names(self, kind: str) -> list[str]:
        return sorted(n for k, n in self.entries if k == kind)

    def get(self, kind: str, name: str) -> Registration:
        try:
            return self.entries[(kind, name)]
        except KeyError:
            valid = ", ".join(self.names(kind)) or "none installed"
            raise UserError(f"unknown {kind} {name!r}; valid names: {valid}") from None

    def all(self) -> list[Registration]:
        return sorted(self.entries.values(), key=lambda r: (r.kind, r.name))

    def build(self, kind: str, cfg: Any) -> Any:
        """Build a component from its config node (``{name: ..., <param fields>}``)."""
        node = _plain(cfg)
        if isinstance(node, str):
            node = {"name": node}
        name = node.pop("name", None)
        if not name:
            raise UserError(f"config for {kind} has no 'name'")
        reg = self.get(kind, name)
        return resolve_factory(reg)(make_params(reg, node))


def resolve_factory(reg: Registration) -> Callable[..., Any]:
    """A factory may be registered as ``"module:attribute"`` so that heavy imports wait
    until the component is actually built."""
    if not isinstance(reg.factory, str):
        return reg.factory
    import importlib

    module, _, attr = reg.factory.partition(":")
    return getattr(importlib.import_module(module), attr)


def make_params(reg: Registration, values: dict[str, Any]) -> Any:
    """Instantiate the registration's params dataclass from config values."""
    if reg.params is None:
        return dict(values)
    known = {f.name for f in dataclasses.fields(reg.params)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise UserError(
            f"{reg.kind} {reg.name!r} has no parameter {unknown[0]!r}; "
            f"known: {', '.join(sorted(known))}"
        )
    return reg.params(**values)


def _plain(cfg: Any) -> Any:
    from omegaconf import DictConfig, OmegaConf

    if isinstance(cfg, DictConfig):
        return OmegaConf.to_container(cfg, resolve=True)
    if isinstance(cfg, dict):
        return dict(cfg)
    return cfg


@dataclass(frozen=True)
class LoadFailure:
    entry_point: str
    distribution: str
    error: str


LOAD_FAILURES: list[LoadFailure] = []
_DISTS: dict[int, tuple[str, str]] = {}


def get_plugin_manager() -> pluggy.PluginManager:
    """A plugin manager with every ``skilleval`` entry point loaded and checked.

    A plugin that fails to import is reported (stderr, and by ``skilleval plugins``) and
    skipped, so one broken third-party package cannot take the tool down.
    ``SKILLEVAL_LOAD_PLUGINS=a,b`` restricts loading to the named entry points (built-ins
    included: name them too).
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    allow = os.environ.get("SKILLEVAL_LOAD_PLUGINS")
    allowed = None if allow is None else {a.strip() for a in allow.split(",") if a.strip()}
    for ep in sorted(metadata.entry_points(group=hookspecs.PROJECT), key=lambda e: e.name):
        if allowed is not None and ep.name not in allowed:
            continue
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        dist = (ep.dist.name, ep.dist.version) if ep.dist else (ep.name, "unknown")
        try:
            plugin = ep.load()
        except Exception as exc:  # noqa: BLE001 - report any import failure, keep going
            failure = LoadFailure(ep.name, dist[0], f"{type(exc).__name__}: {exc}")
            if failure not in LOAD_FAILURES:
                LOAD_FAILURES.append(failure)
                from skilleval.terminal import visible_line  # a plugin's message is not ours

                print(f"skilleval: warning: plugin {ep.name!r} from {visible_line(dist[0])} failed to "
                      f"load ({visible_line(failure.error)}); skipped", file=sys.stderr)
            continue
        pm.register(plugin, name=ep.name)
        _DISTS[id(plugin)] = dist
    pm.check_pending()
    return pm


def collect(pm: pluggy.PluginManager) -> Registry:
    """Call every registration hook, remembering which distribution made each entry."""
    dists = dict(_DISTS)
    registry = Registry()
    for kind, hook_name in KINDS.items():
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            dist, version = dists.get(id(impl.plugin), (impl.plugin_name, _version_of(impl.plugin_name)))

            def register(name: str, factory: Callable[..., Any] | str, params: type | None = None,
                         help: str = "", *, _kind: str = kind, _impl: Any = impl,
                         _dist: str = dist, _ver: str = version) -> None:
                registry.add(Registration(_kind, name, factory, params, help,
                                          _impl.plugin_name, _dist, _ver))

            impl.function(register=register)
    return registry


def _version_of(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


def publish_to_config_store(registry: Registry) -> None:
    """Expose every registration as a typed Hydra option in the group of its kind."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    for reg in registry.all():
        if reg.kind in _UNPUBLISHED:
            continue
        fields: list[Any] = [("name", str, dataclasses.field(default=reg.name))]
        if reg.params is not None:
            hints = typing.get_type_hints(reg.params)
            for f in dataclasses.fields(reg.params):
                default = (dataclasses.field(default=f.default) if f.default is not dataclasses.MISSING
                           else dataclasses.field(default_factory=f.default_factory))  # type: ignore[misc]
                fields.append((f.name, hints[f.name], default))
        node = make_dataclass(f"{reg.kind}_{reg.name}".replace("-", "_"), fields)
        package = f"{reg.kind}.{reg.name}" if reg.kind in _MULTI else None
        cs.store(group=reg.kind, name=reg.name, node=node, package=package, provider=reg.distribution)


@lru_cache(maxsize=1)
def default_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager: entry points are found, loaded and checked once, not
    again for each job's lifecycle hooks (about 30 ms each time)."""
    return get_plugin_manager()


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The process-wide registry (entry points are loaded once)."""
    return collect(default_plugin_manager())
