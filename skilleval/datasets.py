"""Trigger eval sets in and out: skill-creator's JSON array, and JSONL.

Each entry is ``{"query": str, "should_trigger": bool}`` with optional ``id`` and ``split``.
Unlike skill-creator (which merges duplicate queries silently), a duplicate query is an
error naming both entries.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from skilleval.domain import TriggerCase
from skilleval.errors import UserError
from skilleval.textfiles import parse_json, read_text_file, surrogate_problem

DEFAULT_NAMES = ("trigger_eval.json", "trigger_evals.json", "trigger_eval.jsonl")
SPLITS = ("train", "validation", "test")


def default_cases_path(skill_dir: Path) -> Path:
    for name in DEFAULT_NAMES:
        p = skill_dir / "evals" / name
        if p.is_file():
            return p
    raise UserError(f"{skill_dir}: no eval set found (looked for evals/{', evals/'.join(DEFAULT_NAMES)}); "
                    f"pass cases=PATH, or draft one: skilleval +experiment=draft_evals skill={skill_dir}")


def _read_entries(path: Path) -> list[tuple[str, Any]]:
    """(label, raw entry) pairs; the label says where an entry is (for error messages)."""
    if path.is_dir():
        raise UserError(f"eval set {path} is a folder: give the file (a JSON array of "
                        f"{{query, should_trigger}}, or .jsonl)")
    if not path.is_file():
        raise UserError(f"eval set not found: {path}")
    text = read_text_file(path)
    if path.suffix == ".jsonl":
        entries = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            entries.append((f"line {lineno}", parse_json(line, f"{path}: line {lineno}")))
        return entries
    data = parse_json(text, str(path))
    if isinstance(data, dict) and isinstance(data.get("queries"), list):
        data = data["queries"]
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a JSON array of {{query, should_trigger}} objects, "
                        f"got {type(data).__name__}")
    return [(f"entry {i}", e) for i, e in enumerate(data)]


def load_trigger_cases(path: str | Path) -> list[TriggerCase]:
    path = Path(path).expanduser()
    entries = _read_entries(path)
    if not entries:
        raise UserError(f"{path}: the eval set is empty")
    cases: list[TriggerCase] = []
    seen: dict[str, str] = {}
    for label, entry in entries:
        where = f"{path}: {label}"
        problem = entry_problem(entry)
        if problem:
            raise UserError(f"{where}: {problem}")
        query = entry["query"].strip()
        if not query:
            raise UserError(f"{where}: 'query' is empty")
        if query in seen:
            raise UserError(f"{where}: duplicate query (same as {seen[query]}): {query[:60]!r}")
        seen[query] = label
        case_id = entry.get("id", f"q{len(cases):03d}")
        cases.append(TriggerCase(str(case_id), query, entry["should_trigger"], entry.get("split")))
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise UserError(f"{path}: duplicate id {dup!r}")
    return cases


def query_problem(query: str) -> str | None:
    """Why a query cannot be sent as written, or None. A NUL byte passes JSON and the stub,
    then fails every claude_cli trial ("embedded null byte": no command line carries one),
    so the run paid for the rest and reported the query insufficient."""
    if "\x00" in query:
        return f"'query' contains a NUL character (U+0000) at {query.index(chr(0))}, which no command line can carry"
    if problem := surrogate_problem(query):  # a parsed file was checked; a page's save was not
        return f"'query' {problem}"
    return None


def entry_problem(entry: Any, *, blank_id_ok: bool = False) -> str | None:
    """Why `entry` is not a trigger eval entry (an object with a string ``query``, a boolean
    ``should_trigger``, a known ``split`` and a string or whole-number ``id``), or None. The
    one rule the runner and the eval-set tools (check-evals, review-evals) read by, so a set
    one accepts the other does too. `blank_id_ok`: a null or empty ``id`` is allowed (the
    eval-set tools give such a row an id). Set-level rules (duplicates) are the caller's."""
    if not isinstance(entry, dict):
        return f"expected an object, got {type(entry).__name__}"
    for key, typ, tname in (("query", str, "a string"), ("should_trigger", bool, "true or false")):
        if key not in entry:
            return f"missing key '{key}'"
        if not isinstance(entry[key], typ):
            return f"'{key}' must be {tname}, got {json.dumps(entry[key])}"
    if problem := query_problem(entry["query"]):
        return problem
    split = entry.get("split")
    if split is not None and split not in SPLITS:
        return f"'split' must be one of {', '.join(SPLITS)}, got {split!r}"
    if "id" in entry:
        case_id = entry["id"]
        if not (blank_id_ok and (case_id is None or case_id == "")) and (
                isinstance(case_id, bool) or not isinstance(case_id, (str, int))):
            return f"'id' must be a string or a whole number, got {json.dumps(case_id)}"
    return None


def dump_trigger_cases(cases: Iterable[TriggerCase], path: str | Path) -> None:
    """Write skill-creator's format (a JSON array), keeping ids and splits as extra keys."""
    rows = []
    for c in cases:
        row: dict[str, Any] = {"query": c.query, "should_trigger": c.should_trigger, "id": c.id}
        if c.split:
            row["split"] = c.split
        rows.append(row)
    Path(path).write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def check_trigger_inputs(job: Any) -> tuple[Any, list[TriggerCase]]:
    """``check_inputs`` of the experiments that read a trigger eval set (trigger_eval,
    attribute): the skill and its set, read before the run is stored (bad ones refused, see
    ``hookspecs.register_experiments``) and kept as ``job.prepared``. `job` is the
    ``app.JobContext``."""
    skill = job.load_skill()
    return skill, job.load_cases(skill)
