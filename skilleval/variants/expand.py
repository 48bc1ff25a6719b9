"""``variant='glob(*)'``: expanded to the variants file's names before Hydra sees it.

Why here and not in Hydra: Hydra's ``glob()`` sweeps over the options of a *config group*;
``variant`` is a plain key whose values live in a file named by another override
(``variants=FILE``), which Hydra's basic sweeper cannot read. A sweeper plugin would have to
replace the basic sweeper for every user (and its own options, such as ``hydra.sweeper``
settings); rewriting one command-line argument keeps Hydra's sweeper, its job numbering and
its ``-m`` semantics untouched. We parse the argument with Hydra's own override parser and
filter with its `Glob.filter`, so ``glob(*,exclude=long*)`` means what it means in Hydra.

The whole variants file is also validated here, so a bad variant is exit 2 before the
sweep starts.
"""
from __future__ import annotations

from skilleval.errors import UserError
from skilleval.variants.source import ORIGINAL, load_variants


def _value_of(args: list[str], key: str) -> tuple[int, str] | None:
    for i, a in enumerate(args):
        for prefix in (f"{key}=", f"+{key}=", f"++{key}="):
            if a.startswith(prefix):
                return i, a[len(prefix):]
    return None


def quote_description(args: list[str]) -> list[str]:
    """``description=Text, with commas`` passed to Hydra as one quoted string.

    Why: descriptions are prose; unquoted, Hydra's grammar reads a comma as a sweep list and
    rejects ``<``, ``(`` or ``$``. For several descriptions use ``variants=FILE``.
    """
    found = _value_of(args, "description")
    if found is None:
        return args
    i, value = found
    if value[:1] in ("'", '"') and value[-1:] == value[:1] and len(value) >= 2:
        return args  # already quoted by the user: Hydra's rules apply
    body = value.replace("'", "\\'").replace("${", "\\${")
    trailing = len(body) - len(body.rstrip("\\"))
    body += "\\" * trailing  # a final backslash must not escape the closing quote
    key = args[i][: len(args[i]) - len(value)]
    return [*args[:i], f"{key}'{body}'", *args[i + 1:]]


def expand_variant_args(args: list[str]) -> list[str]:
    """`args` with ``variant=glob(...)`` replaced by ``variant=a,b,...`` (sorted, plus
    ``original``, the SKILL.md description every summary compares against)."""
    args = quote_description(args)
    found = _value_of(args, "variant")
    files = _value_of(args, "variants")
    if files is not None and "," not in files[1] and "glob(" not in files[1]:
        load_variants(files[1])  # exit 2 before the first job, naming the bad variant
    if found is None or "glob(" not in found[1]:
        return args
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import Glob

    i, value = found
    try:
        [override] = OverridesParser.create().parse_overrides([f"variant={value}"])
    except Exception as exc:  # Hydra's grammar errors, over two lines: one line, as cli says them
        said = "; ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip())
        raise UserError(f"variant={value}: {said}") from None
    glob = override.value()
    if not isinstance(glob, Glob):
        return args
    if files is None or "," in files[1] or "glob(" in files[1]:
        raise UserError(f"variant={value} needs exactly one variants=FILE to expand against")
    names = sorted(set(load_variants(files[1])) | {ORIGINAL})
    chosen = glob.filter(names)
    if not chosen:
        raise UserError(f"variant={value}: matches none of {', '.join(names)}")
    if len(chosen) > 1 and not {"-m", "--multirun"} & set(args):  # else Hydra's "ambiguous
        # value" message quotes a list the user never typed
        raise UserError(f"variant={value} picks {len(chosen)} variants ({', '.join(chosen)}): "
                        "add -m to sweep over them, or choose one with variant=NAME")
    return [*args[:i], f"variant={','.join(chosen)}", *args[i + 1:]]
