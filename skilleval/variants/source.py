"""Description variants: where they come from and which one a job measures (issue 15).

Config keys (all optional, see ``conf/config.yaml``):

* ``description="…"``: measure the skill with this description for one run;
* ``variants=FILE``: a YAML or JSON mapping ``name -> description``, or a folder of
  ``NAME.txt`` files; ``variant=NAME`` picks one. The name ``original`` always means the
  description in SKILL.md unless the file defines it.

The SKILL.md on disk is never touched: the job's `Skill` carries the chosen description
(`Skill.with_description`), which is the one field backends take from the Skill object
instead of the folder. Every description in the file is checked before any call, so a bad
one stops a sweep at its first job, naming the variant.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from skilleval.errors import UserError
from skilleval.skills import UniqueKeyLoader, yaml_problem

ORIGINAL = "original"
#: Names a Hydra override can carry unquoted (they become ``variant=NAME`` sweep values).
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def description_hash(description: str) -> str:
    return hashlib.sha256(description.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Choice:
    """The description a job measures: `name` is the variant ("" when none was chosen)."""

    name: str
    description: str | None  # None: the skill's own (SKILL.md)


def _check(text: Any, what: str) -> str:
    """`text` stripped, or exit 2 naming `what` (validate's rules: 1-1024 chars, no < >)."""
    from skilleval.optimize.proposers import validate_description

    if not isinstance(text, str):
        raise UserError(f"{what} must be a string, got {type(text).__name__}")
    text = text.strip()
    problem = validate_description(text)
    if problem is not None:
        raise UserError(f"{what}: {problem}")
    return text


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def load_variants(path: str | Path) -> dict[str, str]:
    """name -> description from a YAML/JSON file or a folder of NAME.txt; all validated."""
    p = Path(str(path)).expanduser()
    if p.is_dir():
        raw: dict[str, Any] = {}
        for f in sorted(p.glob("*.txt")):
            if f.name.startswith("."):  # an editor's or the OS's file, not a variant
                continue
            try:
                raw[f.stem] = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise UserError(f"variants={p}: cannot read {f.name}: {exc}") from None
        if not raw:
            raise UserError(f"variants={p}: the folder holds no NAME.txt files")
    elif p.is_file():
        try:
            text = p.read_text(encoding="utf-8")
            # a name given twice is refused (the parsers keep the last one silently)
            raw = json.loads(text, object_pairs_hook=_unique_pairs) if p.suffix.lower() == ".json" \
                else yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 - a SafeLoader
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
            first = yaml_problem(exc) if isinstance(exc, yaml.YAMLError) else \
                next(iter(str(exc).strip().splitlines()), type(exc).__name__)
            raise UserError(f"variants={p}: not valid {'JSON' if p.suffix == '.json' else 'YAML'}: "
                            f"{first}") from None
        if not isinstance(raw, dict) or not raw:
            raise UserError(f"variants={p}: expected a mapping of variant name to description")
    else:
        raise UserError(f"variants={p}: no such file or folder")
    out: dict[str, str] = {}
    for name, text in raw.items():
        if not isinstance(name, str):  # YAML reads yes/no as booleans and 1.0 as a number
            raise UserError(f"variants={p}: variant name {name!r} is read as a "
                            f"{type(name).__name__}, not text; quote the name in the file")
        if not _NAME.match(name):
            raise UserError(f"variants={p}: variant name {name!r} must start with a letter or digit, "
                            "then letters, digits, '_', '-' or '.', at most 64 characters")
        if name == ORIGINAL:  # it would shadow SKILL.md's own wording, which sweeps compare with
            raise UserError(f"variants={p}: a variant may not be named {ORIGINAL!r}: that name means "
                            "SKILL.md's own description (the one every variant is compared with); "
                            "rename it")
        out[name] = _check(text, f"variants={p}: variant {name!r}")
    return out


def choose(cfg: Any) -> Choice:
    """The job's variant from ``description``, ``variants`` and ``variant`` (validated)."""
    desc, file, name = cfg.get("description"), cfg.get("variants"), cfg.get("variant")
    if desc is not None and (file or name):
        raise UserError("description=… and variants=/variant= cannot be combined; pick one")
    if desc is not None:
        return Choice("description", _check(str(desc), "description=…"))
    if name is None or name == "":
        if file:
            load_variants(file)  # still checked: a sweep must fail before its first call
        return Choice("", None)
    name = str(name)
    if not file:
        if name == ORIGINAL:
            return Choice(ORIGINAL, None)
        raise UserError(f"variant={name} needs variants=FILE (a mapping of names to descriptions)")
    table = load_variants(file)
    for other in swept_values("variant"):  # a sweep's later typo must stop it before job 0
        if other not in table and other != ORIGINAL:
            raise UserError(f"variant={other} (swept): not in {file} (has: {', '.join(sorted(table))}; "
                            f"{ORIGINAL} means SKILL.md's own)")
    if name in table:
        return Choice(name, table[name])
    if name == ORIGINAL:
        return Choice(ORIGINAL, None)
    raise UserError(f"variant={name}: not in {file} (has: {', '.join(sorted(table))}; "
                    f"{ORIGINAL} means SKILL.md's own)")


def swept_values(key: str) -> list[str]:
    """The values a multirun sweeps ``key`` over on this command line (``variant=a,b,c``), so
    every job can check them all: the check would otherwise come at each value's own job,
    after the earlier jobs were paid for. Hydra's own override parser reads the arguments;
    empty when not sweeping ``key`` or when the arguments are not Hydra overrides."""
    import sys

    from hydra.core.hydra_config import HydraConfig
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.types import RunMode

    try:
        if not HydraConfig.initialized() or HydraConfig.get().mode != RunMode.MULTIRUN:
            return []
        overrides = OverridesParser.create().parse_overrides(
            [a for a in sys.argv[1:] if "=" in a and not a.startswith("-")])
    except Exception:  # noqa: BLE001 - best effort: each job still checks its own value
        return []
    return [str(v) for o in overrides if o.key_or_group == key and o.is_sweep_override()
            for v in o.sweep_string_iterator()]
