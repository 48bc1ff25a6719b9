"""Functional eval sets: skill-creator's ``evals/evals.json``.

Accepted: ``{"skill_name": ..., "evals": [{id, prompt, expected_output?, files?, expectations?
| assertions?, name?}]}``, or a bare list of evals. Each expectation is either a plain string
(graded by the configured LLM judge) or a typed check ``{"type": NAME, ...}`` graded by the
judge registered as NAME (built-ins: ``file_exists``, ``contains``, ``regex``, ``json_path``).
"""
from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilleval.errors import UserError
from skilleval.execution import sandbox_relative
from skilleval.textfiles import load_json_file


@dataclass(frozen=True)
class Expectation:
    text: str  # what grading.json shows
    spec: dict[str, Any] | None = field(default=None, hash=False, compare=False)

    @property
    def type(self) -> str | None:
        return None if self.spec is None else str(self.spec.get("type"))

    def fingerprint(self) -> Any:
        return self.text if self.spec is None else self.spec


@dataclass(frozen=True)
class TaskCase:
    id: str
    name: str
    prompt: str
    expected_output: str = ""
    files: tuple[str, ...] = ()
    expectations: tuple[Expectation, ...] = ()

    @property
    def dir_name(self) -> str:
        """skill-creator's eval directory name (``eval-<name>``)."""
        return f"eval-{self.name}"

    def fingerprint(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "files": list(self.files)}


def describe_check(spec: dict[str, Any]) -> str:
    t, path = spec.get("type"), spec.get("path", "")
    if t == "file_exists":
        return f"{path} exists"
    if t == "contains":
        return f"{path} contains {spec.get('text')!r}"
    if t == "regex":
        return f"{path} has a line matching /{spec.get('pattern')}/"
    if t == "json_path":
        if "equals" not in spec:  # the check then asks only that the value be there
            return f"{path} has {spec.get('query')} (not null)"
        return f"{path} {spec.get('query')} == {json.dumps(spec.get('equals'))}"
    rest = {k: v for k, v in spec.items() if k not in ("type", "path")}
    return f"{t} {path} {json.dumps(rest, sort_keys=True)}".strip()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "eval"


def _check_pattern(pattern: Any, where: str) -> None:
    """An invalid pattern is bad input (exit 2 at load), not an error in every grade."""
    import regex

    if not isinstance(pattern, str) or not pattern:
        raise UserError(f"{where}: regex check needs a non-empty string 'pattern'")
    try:
        regex.compile(pattern, regex.M | regex.VERSION0)
    except regex.error as exc:
        raise UserError(f"{where}: invalid regex /{pattern}/: {exc}") from None


_JSONPATH_STEP = re.compile(r"\.([A-Za-z_][\w\-]*)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]")


def json_path_steps(query: str) -> list[str | int]:
    """The steps of a JSONPath in the small subset the ``json_path`` check reads (``$``,
    ``.key``, ``[index]``, ``['key']``); ValueError on anything else."""
    q = query.strip()
    if not q.startswith("$"):
        raise ValueError(f"JSONPath must start with '$': {query}")
    steps: list[str | int] = []
    pos = 1
    while pos < len(q):
        m = _JSONPATH_STEP.match(q, pos)
        if not m:
            raise ValueError(f"unsupported JSONPath syntax at {q[pos:]!r}")
        key, idx, qkey = m.groups()
        steps.append(int(idx) if idx is not None else key if key is not None else qkey)
        pos = m.end()
    return steps


def _check_output_path(path: Any, where: str) -> None:
    """A typed check reads a file the run wrote, so its ``path`` is relative to the sandbox and
    stays inside it. Checked lexically at load: a check that can never read its file would be
    graded "fail" in every run of every arm (a bad eval set scored as a worse skill)."""
    if not isinstance(path, str) or not path.strip():
        raise UserError(f"{where}: typed check needs a non-empty string 'path' (relative to the sandbox)")
    try:
        sandbox_relative(path)
    except PermissionError as exc:
        raise UserError(f"{where}: 'path' must be relative to the sandbox and stay inside it ({exc})") from None


#: each built-in check's options (besides ``type``, ``path`` and ``description``)
BUILTIN_OPTIONS: dict[str, frozenset[str]] = {
    "file_exists": frozenset(), "contains": frozenset({"text"}),
    "regex": frozenset({"pattern", "timeout_s"}), "json_path": frozenset({"query", "equals"})}
#: the keys of an eval that skilleval reads (skill-creator's, and ``assertions``/``eval_name``)
EVAL_KEYS = ("id", "name", "eval_name", "prompt", "expected_output", "files", "expectations", "assertions")


def _unknown_key(key: str, known: Sequence[str], where: str, what: str) -> UserError:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return UserError(f"{where}: {what} has no key {key!r} ({hint}valid: {', '.join(sorted(known))})")


def _check_builtin(raw: dict[str, Any], where: str) -> None:
    """The built-in checks' options, checked at load (exit 2 before any call). A check with a
    missing option is not graded wrong later: ``contains`` without ``text`` would pass every
    run (the empty string is in every file), ``json_path`` without ``query`` fail every run.
    An unknown key is refused too: ``"equal": 4`` for ``"equals": 4`` left a json_path check
    that asked only for a value, and passed every run."""
    t = raw["type"]
    known = BUILTIN_OPTIONS[t] | {"type", "path", "description"}
    for key in raw:
        if key not in known:
            raise _unknown_key(str(key), sorted(known), where, f"a {t} check")
    _check_output_path(raw.get("path"), where)
    if t == "contains":
        text = raw.get("text")
        if isinstance(text, bool) or not isinstance(text, (str, int, float)) or str(text) == "":
            raise UserError(f"{where}: contains check needs a non-empty 'text'")
    elif t == "regex":
        _check_pattern(raw.get("pattern"), where)
        limit = raw.get("timeout_s")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float))
                                  or limit <= 0):
            raise UserError(f"{where}: 'timeout_s' must be a positive number of seconds, got {limit!r}")
    elif t == "json_path":
        query = raw.get("query")
        if not isinstance(query, str):
            raise UserError(f"{where}: json_path check needs a string 'query' (e.g. '$.rows_out')")
        try:
            json_path_steps(query)
        except ValueError as exc:
            raise UserError(f"{where}: {exc}") from None


BUILTIN_CHECKS = tuple(BUILTIN_OPTIONS)


def parse_expectation(raw: Any, where: str) -> Expectation:
    if isinstance(raw, str):
        if not raw.strip():
            raise UserError(f"{where}: empty expectation")
        return Expectation(raw.strip())
    if isinstance(raw, dict):
        if not isinstance(raw.get("type"), str):
            raise UserError(f"{where}: typed expectation needs a string 'type'")
        if raw["type"] in BUILTIN_CHECKS:  # a plugin's check validates its own options
            _check_builtin(raw, where)
        return Expectation(str(raw.get("description") or describe_check(raw)), dict(raw))
    raise UserError(f"{where}: expectation must be a string or an object, got {type(raw).__name__}")


def load_evals(path: Path) -> tuple[str | None, list[TaskCase]]:
    """Parse an evals.json; errors name the file and the entry."""
    if path.is_dir():
        raise UserError(f"functional eval set {path} is a folder: give the file (evals.json)")
    if not path.is_file():
        raise UserError(f"functional eval set not found: {path}")
    data = load_json_file(path)
    skill_name = None
    if isinstance(data, dict):
        skill_name = data.get("skill_name")
        data = data.get("evals")
    if not isinstance(data, list) or not data:
        raise UserError(f"{path}: expected a non-empty 'evals' list")
    cases: list[TaskCase] = []
    seen: set[str] = set()
    names: set[str] = set()
    for i, ev in enumerate(data):
        where = f"{path}: eval #{i}"
        if not isinstance(ev, dict):
            raise UserError(f"{where}: must be an object")
        for key in ev:  # a misspelt key of ours is refused; another tool's own keys pass
            if key not in EVAL_KEYS and difflib.get_close_matches(str(key), EVAL_KEYS, n=1, cutoff=0.8):
                raise _unknown_key(str(key), EVAL_KEYS, where, "an eval")
        prompt = ev.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise UserError(f"{where}: missing or empty 'prompt'")
        eid = str(ev.get("id", i))
        name = ev.get("name") or ev.get("eval_name") or (eid if "id" in ev else _slug(prompt))
        name = _slug(str(name)) if not str(name).isdigit() else str(name)
        if eid in seen:
            raise UserError(f"{where}: duplicate eval id {eid!r}")
        seen.add(eid)
        if name in names:  # two evals sharing a folder would share sandboxes and workspace runs
            name = f"{name}-{_slug(eid)}"
            if name in names:
                raise UserError(f"{where}: eval name {name!r} is used twice")
        names.add(name)
        raw_exp = ev.get("expectations", ev.get("assertions", [])) or []
        if "expectations" in ev and "assertions" in ev:
            raw_exp = list(ev["expectations"]) + list(ev["assertions"])
        if not isinstance(raw_exp, list):
            raise UserError(f"{where}: 'expectations' must be a list")
        files = ev.get("files", []) or []
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise UserError(f"{where}: 'files' must be a list of paths")
        cases.append(TaskCase(
            id=eid, name=name, prompt=prompt, expected_output=str(ev.get("expected_output", "")),
            files=tuple(files),
            expectations=tuple(parse_expectation(e, f"{where} expectation #{j}")
                               for j, e in enumerate(raw_exp)),
        ))
    return skill_name, cases


def default_evals_path(skill_root: Path) -> Path:
    for name in ("evals/evals.json", "evals.json"):
        if (skill_root / name).is_file():
            return skill_root / name
    return skill_root / "evals" / "evals.json"
