"""Name -> factory registry, fed by plugin hooks and published to Hydra's ConfigStore.

Every component a job uses is built here, by kind and name, from a registration made
through a hook in `skilleval.hookspecs`. Built-ins come in through the same entry points as
third-party plugins, so this module knows no component by name.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import sys
import types
import typing
from dataclasses import dataclass, field, make_dataclass
from functools import lru_cache
from importlib import metadata
from typing import Any, Callable

import pluggy

from skilleval import hookspecs
from skilleval.hookspecs import Register  # noqa: F401 - re-exported: plugins import it from here
from skilleval.errors import HarnessError, SkillevalError, UserError

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
    #: why the component cannot be used (its params dataclass is not one Hydra can type), or
    #: None. Such a registration stays listed (``skilleval plugins`` shows the problem) with
    #: ``params=None``, and building it is refused (exit 2): one broken option must not take
    #: down ``--help`` or runs that do not use it.
    problem: str | None = None


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

    def warn_clashes(self, level: str) -> None:
        """One stderr line per clash (``--help`` warns, ``skilleval plugins`` errs)."""
        from skilleval.terminal import visible_line  # plugin names are not ours

        for clash in self.clashes:
            print(f"skilleval: {level}: {visible_line(clash)}; runs refuse to start until one is "
                  "removed", file=sys.stderr)

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
            reg = self.entries[(kind, name)]
        except KeyError:
            valid = ", ".join(self.names(kind)) or "none installed"
            raise UserError(f"unknown {kind} {name!r}; valid names: {valid}") from None
        if reg.problem is not None:
            raise UserError(f"{kind} {name!r} from plugin {reg.plugin!r} ({reg.distribution}) "
                            f"cannot be used: {reg.problem}")
        return reg

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
        try:
            component = resolve_factory(reg)(make_params(reg, node))
        except SkillevalError:
            raise
        except Exception as exc:
            if reg.distribution == "skilleval":
                raise  # our own bug: its traceback is what a report needs
            raise HarnessError(f"{kind} {name!r} from plugin {reg.plugin!r} ({reg.distribution} "
                               f"{reg.version}) failed to build: {type(exc).__name__}: {exc}") from None
        from skilleval.plugin_identity import key_the_plugin

        key_the_plugin(component, reg, node)
        return component


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
    ``SKILLEVAL_LOAD_PLUGINS=a,b`` loads only the named third-party entry points (empty: none).
    skilleval's own entry points always load: the configuration's defaults name built-in
    options (``executor=local``), so leaving them out made ``--help`` and every run fail.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    allow = os.environ.get("SKILLEVAL_LOAD_PLUGINS")
    allowed = None if allow is None else {a.strip() for a in allow.split(",") if a.strip()}
    found: set[str] = set()
    for ep in sorted(metadata.entry_points(group=hookspecs.PROJECT), key=lambda e: e.name):
        builtin = ep.dist is not None and ep.dist.name == "skilleval"
        found.add(ep.name)
        if allowed is not None and not builtin and ep.name not in allowed:
            continue
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        dist = (ep.dist.name, ep.dist.version) if ep.dist else (ep.name, "unknown")
        try:
            plugin = ep.load()
        except Exception as exc:  # noqa: BLE001 - report any import failure, keep going
            _load_failed(ep.name, dist[0], f"{type(exc).__name__}: {exc}")
            continue
        pm.register(plugin, name=ep.name)
        _DISTS[id(plugin)] = dist
    for name in sorted((allowed or set()) - found):
        print(f"skilleval: warning: SKILLEVAL_LOAD_PLUGINS names {name!r}, which no installed "
              "plugin provides", file=sys.stderr)
    pm.check_pending()
    return pm


def collect(pm: pluggy.PluginManager) -> Registry:
    """Call every registration hook, remembering which distribution made each entry.

    A plugin whose registration hook raises is treated like one that fails to import: warned
    about once, listed by ``--version`` as "failed to load", unregistered (its lifecycle hooks
    are not called either) and none of its registrations kept, so it cannot take ``--help``,
    ``skilleval plugins`` and every run down with a traceback. A registration whose params
    Hydra cannot type is kept as unusable (`params_problem`).
    """
    dists = dict(_DISTS)
    registry = Registry()
    made: list[Registration] = []
    failed: dict[str, tuple[Any, str]] = {}  # plugin name -> (plugin, error)
    for kind, hook_name in KINDS.items():
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            if impl.plugin_name in failed:
                continue
            dist, version = dists.get(id(impl.plugin), (impl.plugin_name, _version_of(impl.plugin_name)))

            def register(name: str, factory: Callable[..., Any] | str, params: type | None = None,
                         help: str = "", *, _kind: str = kind, _impl: Any = impl,
                         _dist: str = dist, _ver: str = version) -> None:
                made.append(Registration(_kind, name, factory, params, help,
                                         _impl.plugin_name, _dist, _ver))

            try:
                impl.function(register=register)
            except Exception as exc:  # noqa: BLE001 - a plugin's bug is reported, not raised
                failed[impl.plugin_name] = (impl.plugin, f"{hook_name} raised {type(exc).__name__}: {exc}")
                _load_failed(impl.plugin_name, dist, failed[impl.plugin_name][1])
    for reg in made:
        if reg.plugin in failed:
            continue
        problem = name_problem(reg.name) or params_problem(reg.params)
        if problem is not None:
            reg = _unusable(reg, problem)
        registry.add(reg)
    for name, (plugin, _) in failed.items():
        if pm.get_plugin(name) is plugin:
            pm.unregister(plugin)
    return registry


def _load_failed(entry_point: str, distribution: str, error: str) -> None:
    """Record and warn (once) about a plugin that could not be loaded."""
    failure = LoadFailure(entry_point, distribution, error)
    if failure in LOAD_FAILURES:
        return
    LOAD_FAILURES.append(failure)
    from skilleval.terminal import visible_line  # a plugin's message is not ours

    print(f"skilleval: warning: plugin {entry_point!r} from {visible_line(distribution)} failed to "
          f"load ({visible_line(error)}); skipped", file=sys.stderr)


_WARNED: set[tuple[str, str, str]] = set()


def _unusable(reg: Registration, problem: str) -> Registration:
    """`reg` marked unusable (params dropped, so nothing else reads them), warned about once."""
    from skilleval.terminal import visible_line

    key = (reg.kind, reg.name, reg.plugin)
    if key not in _WARNED:
        _WARNED.add(key)
        print(f"skilleval: warning: plugin {reg.plugin!r} ({visible_line(reg.distribution)}): "
              f"{reg.kind} {reg.name!r} is unusable: {visible_line(problem)}", file=sys.stderr)
    return dataclasses.replace(reg, params=None, problem=problem,
                               help=f"UNUSABLE: {problem}" + (f" ({reg.help})" if reg.help else ""))


def _version_of(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


def publish_to_config_store(registry: Registry) -> None:
    """Expose every registration as a typed Hydra option in the group of its kind.

    An unusable registration (`Registration.problem`) is published with its name only, so
    selecting it composes and is then refused, in one line, when the job builds it."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    for reg in registry.all():
        if reg.kind in _UNPUBLISHED or name_problem(reg.name):  # no option Hydra could select
            continue
        package = f"{reg.kind}.{reg.name}" if reg.kind in _MULTI else None
        cs.store(group=reg.kind, name=reg.name, node=_config_node(reg.kind, reg.name, reg.params),
                 package=package, provider=reg.distribution)


def _config_node(kind: str, name: str, params: type | None) -> type:
    """The dataclass Hydra stores for an option: ``name`` plus the params' fields."""
    fields: list[Any] = [("name", str, dataclasses.field(default=name))]
    if params is not None:
        hints = typing.get_type_hints(params)
        for f in dataclasses.fields(params):
            default = (dataclasses.field(default=f.default) if f.default is not dataclasses.MISSING
                       else dataclasses.field(default_factory=f.default_factory))  # type: ignore[misc]
            fields.append((f.name, hints[f.name], default))
    return make_dataclass(f"{kind}_{name}".replace("-", "_"), fields)


_SELECTABLE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")


def name_problem(name: Any) -> str | None:
    """None when `name` can be typed as ``kind=NAME`` on the command line, else why not. Hydra
    reads ``backend=a b`` or ``backend=x/y`` as something else (a syntax error, a subgroup), so
    such a registration could never be chosen: it is listed as unusable instead."""
    if isinstance(name, str) and _SELECTABLE.fullmatch(name):
        return None
    return (f"name {name!r} cannot be selected on the command line "
            "(letters, digits, '_' and '-' only, not starting with '-')")


def params_problem(params: Any) -> str | None:
    """None when Hydra can type `params` (see ``skilleval.hookspecs``: a dataclass whose every
    field has a default and a type OmegaConf supports), else the problem in one line, naming
    the field. Checked at registration so that a bad one makes only its own component
    unusable, instead of failing every start in Hydra's ConfigStore with a traceback."""
    if params is None:
        return None
    if not (isinstance(params, type) and dataclasses.is_dataclass(params)):
        return f"params {getattr(params, '__name__', params)!r} is not a dataclass"
    try:
        hints = typing.get_type_hints(params)
    except Exception as exc:  # noqa: BLE001 - e.g. a forward reference that does not resolve
        return f"the type hints of params {params.__name__} do not resolve ({type(exc).__name__}: {exc})"
    for f in dataclasses.fields(params):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            return f"params field {f.name!r} has no default (every field needs one)"
    for f in dataclasses.fields(params):
        if _plain_type(hints[f.name]):
            continue
        from omegaconf import OmegaConf  # only for a type the quick check does not know

        one = make_dataclass("field_check", [(f.name, hints[f.name], dataclasses.field(
            default=f.default) if f.default is not dataclasses.MISSING else dataclasses.field(
            default_factory=f.default_factory))])  # type: ignore[misc]
        try:
            OmegaConf.structured(one)
        except Exception as exc:  # noqa: BLE001 - OmegaConf's ValidationError and friends
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return f"params field {f.name!r}: type {hints[f.name]!r} is not one Hydra can hold ({first})"
    return None


_SCALARS = (int, float, bool, str, bytes, pathlib.Path, typing.Any, type(None))


def _plain_type(hint: Any) -> bool:
    """True for the types OmegaConf surely holds (scalars, Optional of them, list/tuple/dict
    of them): checked without asking OmegaConf, which costs ~1 ms a field at every start."""
    import enum

    if hint in _SCALARS or (isinstance(hint, type) and issubclass(hint, enum.Enum)):
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return len([a for a in args if a is not type(None)]) == 1 and all(_plain_type(a) for a in args)
    if origin in (list, tuple, dict):
        return all(a is Ellipsis or _plain_type(a) for a in args)
    return False


@lru_cache(maxsize=1)
def default_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager: entry points are found, loaded and checked once, not
    again for each job's lifecycle hooks (about 30 ms each time)."""
    return get_plugin_manager()


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The process-wide registry (entry points are loaded once)."""
    return collect(default_plugin_manager())
