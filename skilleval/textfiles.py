"""Reading user files that may be hostile: not UTF-8, not JSON, nested past any reason.

Each failure is a UserError naming the file (and where in it), never a UnicodeDecodeError or
RecursionError traceback.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skilleval.errors import UserError

_SURROGATE = re.compile("[\ud800-\udfff]")


def shown_name(name: str) -> str:
    """A file or folder name as text: bytes that are not UTF-8 (kept by Python as lone
    surrogates, which the store, JSON and every page refuse) become ``\\xff`` escapes."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def surrogate_problem(text: str) -> str | None:
    """Why `text` cannot be written as UTF-8, or None.

    JSON and YAML accept a ``\\ud83d`` escape without its pair, and Python hands a non-UTF-8
    byte on the command line over as ``\\udcff``; such a string crashes the first hash, store
    write or request that encodes it, so it is refused where it enters.
    """
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (f"holds a lone UTF-16 surrogate U+{ord(found.group()):04X} at character "
            f"{found.start()}, which is not text and cannot be written as UTF-8 (an unpaired "
            "\\uD8xx-\\uDFxx escape, or a byte that is not UTF-8)")


def first_surrogate(value: Any) -> tuple[str, str] | None:
    """(where in `value`, problem) for the first string (key or value) of a parsed JSON/YAML
    document that `surrogate_problem` refuses; `where` reads like "entry 1 'query'".
    Iterative: a document json.loads accepted may already be nested near the recursion limit."""
    stack: list[tuple[str, Any]] = [("", value)]
    seen: set[int] = set()  # a container reached twice (YAML aliases share one) is read once
    while stack:
        where, item = stack.pop()
        if isinstance(item, (dict, list)):
            if id(item) in seen:
                continue
            seen.add(id(item))
        if isinstance(item, str):
            problem = surrogate_problem(item)
            if problem:
                return where, problem
        elif isinstance(item, dict):
            children = []
            for key, child in item.items():
                label = f"{where} {key!r}".strip()
                if isinstance(key, str) and (problem := surrogate_problem(key)):
                    return label, f"(the key) {problem}"
                children.append((label, child))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend(reversed([(f"{where}[{i}]" if where else f"entry {i}", child)
                                   for i, child in enumerate(item)]))
    return None


def read_text_file(path: Path) -> str:
    """The file's text (UTF-8, a BOM dropped); UserError when unreadable or not UTF-8."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's default keeps the last of two equal keys silently: ``{"should_trigger": true,
    "should_trigger": false}`` measured as a negative with no word (SKILL.md's frontmatter
    already refuses a key twice)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def parse_json(text: str, where: str) -> Any:
    """`json.loads(text)`, or a UserError saying what is wrong at `where`: invalid, nested
    past the decoder's limit, an object with a key twice, or a string that is not text."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:  # the C decoder's guard against absurd nesting
        raise UserError(f"{where}: JSON nested too deeply to read") from None
    except _DuplicateKey as exc:
        raise UserError(f"{where}: an object has the key {str(exc)!r} twice (which one counts "
                        "is not clear); keep one") from None
    found = first_surrogate(data)
    if found:
        place, problem = found
        raise UserError(f"{where}: {place + ' ' if place else ''}{problem}")
    return data


def load_json_file(path: Path) -> Any:
    return parse_json(read_text_file(path), str(path))
