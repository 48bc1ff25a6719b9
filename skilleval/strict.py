"""Strict keys for command-line overrides: ``trigger.run=3`` is a typo, not a new setting.

Hydra answers an unknown key with "To append to your config use +trigger.run=3", and the
``+`` form is then silently ignored by the code that reads ``trigger.runs``. Before Hydra
composes anything, every ``group.key`` override of our YAML groups (``trigger``, ``gate``,
``functional``, ...) and of the plugin groups (``backend``, ``judge``, ... whose keys are
the options' parameter fields) is checked against the keys that exist, with or without
``+``, and a miss is bad input (exit 2) with the closest valid key.
"""
from __future__ import annotations

import difflib
import re
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

import yaml

from skilleval.errors import UserError

# Groups whose YAML files place keys at the top level, not under the group's name.
_GLOBAL_GROUPS = {"experiment"}


def _keys(path: Any) -> set[str]:
    """The top-level keys of one YAML file, ``defaults`` left out."""
    return {str(k) for k in _load(path) if k != "defaults"}


def yaml_group_keys() -> dict[str, set[str]]:
    """group -> every key any of its YAML options defines (shipped in skilleval.conf)."""
    out: dict[str, set[str]] = {}
    root = resources.files("skilleval.conf")
    for group in root.iterdir():
        if not group.is_dir() or group.name in _GLOBAL_GROUPS or group.name.startswith("_"):
            continue
        keys: set[str] = set()
        for f in group.iterdir():
            if f.name.endswith(".yaml"):
                keys.update(_keys(f))
        if keys:
            out[group.name] = keys
    return out


def experiments_with_group(group: str) -> list[str]:
    """The shipped experiments whose defaults list ``/group`` (``optimize`` -> trigger_opt):
    for saying where a setting belongs when the chosen experiment has no such section."""
    root = resources.files("skilleval.conf") / "experiment"
    return sorted(f.name[:-5] for f in root.iterdir() if f.name.endswith(".yaml")
                  and re.search(rf"^\s*-\s*/{re.escape(group)}\s*:", f.read_text(encoding="utf-8"), re.M))


def _top_level_files() -> list[Any]:
    """config.yaml and the experiments (they write at the top level): the shipped ones and a
    user's own in ``./conf/experiment`` (config.yaml's ``hydra.searchpath``), whose sections
    are theirs to define."""
    root = resources.files("skilleval.conf")
    files = [root / "config.yaml"]
    for exp in (root / "experiment", Path("conf") / "experiment"):
        if exp.is_dir():
            files += [f for f in exp.iterdir() if f.name.endswith(".yaml")]
    return files


def _load(path: Any) -> dict[Any, Any]:
    """One YAML file, read with PyYAML's C loader when it is there: only the keys are needed,
    and building an OmegaConf node per file cost about 10 ms each, for every file, at every
    start (Hydra parses and checks the files it composes itself, after this)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}


def top_level() -> tuple[set[str], dict[str, set[str]]]:
    """The top-level keys of config.yaml and of the experiments, and their *sections*: the
    keys whose value is a mapping (``attribute:``, ``draft:``, ...) -> the keys any file gives
    them. An experiment's own settings live in such a section, not in a group folder, and
    ``attribute.foo=1`` is as much a typo as ``trigger.foo=1``."""
    keys: set[str] = {"experiment", "hydra"}
    sections: dict[str, set[str]] = {}
    for f in _top_level_files():
        for key, value in _load(f).items():
            if key == "defaults":
                continue
            keys.add(str(key))
            if isinstance(value, dict):
                sections.setdefault(str(key), set()).update(str(k) for k in value)
    return keys, sections


def plugin_group_keys() -> dict[str, dict[str, set[str]]]:
    """kind -> option name -> its parameter fields (plus ``name``)."""
    import dataclasses

    from skilleval.registry import default_registry

    out: dict[str, dict[str, set[str]]] = {}
    for reg in default_registry().all():
        fields = {f.name for f in dataclasses.fields(reg.params)} if reg.params else set()
        out.setdefault(reg.kind, {})[reg.name] = fields | {"name"}
    return out


def _suggest(key: str, group: str, candidates: Iterable[str]) -> str:
    """The closest key, and every valid one when the group is small: a close spelling may be
    a different setting (gate.min_f1 is nearest to gate.min_delta, which is functional's)."""
    names = sorted(candidates)
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.5)
    valid = f"valid: {', '.join(names)}"
    if not close:
        return f" ({valid})"
    return f" (did you mean {group}.{close[0]}?" + (f" {valid})" if len(names) <= 12 else ")")


def check_overrides(args: list[str]) -> None:
    """UserError for the first override naming a key no option of its group has."""
    from skilleval.registry import _MULTI

    yaml_keys = yaml_group_keys()
    plugins = plugin_group_keys()
    top: tuple[set[str], dict[str, set[str]]] | None = None  # read once, at the first key needing it
    for arg in args:
        if arg.startswith("-") or "=" not in arg:
            continue
        key = arg.split("=", 1)[0].lstrip("+~")
        if "@" in key or "/" in key:  # package overrides; group choices (hydra/launcher=joblib),
            continue  # which Hydra checks itself
        if "." not in key:
            if top is None:
                top = top_level()
            known = top[0] | set(yaml_keys) | set(plugins)
            if key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.5)
                raise UserError(f"unknown key {key} in {arg!r}"
                                + (f" (did you mean {close[0]}?)" if close else ""))
            continue
        group, rest = key.split(".", 1)
        first = rest.split(".", 1)[0]
        if group in yaml_keys and first not in yaml_keys[group]:
            raise UserError(f"unknown key {key} in {arg!r}{_suggest(first, group, yaml_keys[group])}")
        if group in plugins and group in _MULTI:  # reporter.<option>.<field>
            options = plugins[group]
            if first not in options:
                raise UserError(f"unknown {group} {first!r} in {arg!r}{_suggest(first, group, options)}")
            field = rest.split(".")[1] if rest.count(".") else None
            if field is not None and field not in options[first]:
                raise UserError(f"unknown key {key} in {arg!r}"
                                f"{_suggest(field, f'{group}.{first}', options[first])}")
        elif group in plugins:
            fields = set().union(*plugins[group].values())
            if first not in fields:
                raise UserError(f"unknown key {key} in {arg!r}{_suggest(first, group, fields)}")
        elif group != "hydra" and group not in yaml_keys:  # Hydra checks its own keys
            if top is None:
                top = top_level()
            keys, sections = top
            if group in sections:
                if first not in sections[group]:
                    raise UserError(f"unknown key {key} in {arg!r}"
                                    f"{_suggest(first, group, sections[group])}")
            elif group in keys:
                raise UserError(f"{group} takes one value ({group}=...), not a key {key} in {arg!r}")
            else:
                groups = sections.keys() | set(yaml_keys) | set(plugins)
                close = difflib.get_close_matches(group, sorted(groups), n=1, cutoff=0.5)
                raise UserError(f"unknown key {key} in {arg!r}"
                                + (f" (did you mean {close[0]}.{rest}?)" if close else ""))
