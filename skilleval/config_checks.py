"""Checks on a composed config, run before the store is opened or any call is made.

Why one place: a mistyped value (``trigger.confidence=2``, ``functional.runs=abc``) used to
surface deep inside a run as a TypeError or a StatisticsError traceback, after calls were
paid for. Each check here names the key and the value it got, in one line (exit 2).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from skilleval.checks import checked_number
from skilleval.errors import UserError

# Tools an arm may offer: the sandbox's file tools, and Claude Code's own tool names (the
# claude_cli executor passes those through to --allowedTools).
FILE_TOOLS = ("list_files", "read_file", "write_file", "load_skill")
CLAUDE_CODE_TOOLS = ("Bash", "Edit", "Glob", "Grep", "LS", "MultiEdit", "NotebookEdit", "Read",
                     "Skill", "Task", "TodoWrite", "WebFetch", "WebSearch", "Write")
ARMS = ("with_skill", "new_skill", "without_skill", "old_skill")
#: Most trials per query (trigger.runs, trigger.max_runs). A run plans every trial before the
#: first call, and at 1000 runs a query's 95 % interval is already about ±0.03 wide; more is
#: almost surely a typo (100000 meant 10), and on a paid backend a large bill. Refused up
#: front (exit 2) rather than stalling while millions of trials are planned.
MAX_RUNS_PER_QUERY = 1000


def number(key: str, value: Any, kind: type, *, low: float | None = None, high: float | None = None,
           low_open: bool = False, high_open: bool = False) -> Any:
    """`value` as `kind` within [low, high] (or open ends), else a UserError naming `key`."""
    if isinstance(value, str) and kind is float:  # YAML keeps "1e-3" a string
        try:
            value = float(value)
        except ValueError:
            pass
    # a number of the kind, finite (NaN would pass every range check below)
    value = checked_number(key, value, kind)
    bad_low = low is not None and (value <= low if low_open else value < low)
    bad_high = high is not None and (value >= high if high_open else value > high)
    if bad_low or bad_high:
        lo = "" if low is None else ("(" if low_open else "[") + f"{low:g}"
        hi = "" if high is None else f"{high:g}" + (")" if high_open else "]")
        where = f"in {lo}, {hi}" if low is not None and high is not None else (
            f"{'>' if low_open else '>='} {low:g}" if low is not None else f"{'<' if high_open else '<='} {high:g}")
        raise UserError(f"{key} must be {where}, got {value!r}")
    return value


def check_trigger(t: Any) -> None:
    if t is None:
        return
    runs = number("trigger.runs", t.get("runs", 3), int, low=1)
    _at_most_max_runs("trigger.runs", runs)
    number("trigger.threshold", t.get("threshold", 0.5), float, low=0, high=1, low_open=True)
    max_runs = number("trigger.max_runs", t.get("max_runs", 10), int, low=1)
    _at_most_max_runs("trigger.max_runs", max_runs)
    min_valid = number("trigger.min_valid", t.get("min_valid", 1), int, low=1)
    number("trigger.concurrency", t.get("concurrency", 8), int, low=1)
    number("trigger.confidence", t.get("confidence", 0.95), float, low=0, high=1,
           low_open=True, high_open=True)
    number("trigger.max_error_rate", t.get("max_error_rate", 0.5), float, low=0, high=1)
    number("trigger.catalog", t.get("catalog", 0), int, low=0)
    from skilleval.trigger.policies import POLICIES

    if t.get("policy") is not None and t.get("policy") not in POLICIES:
        raise UserError(f"unknown trigger.policy {t.get('policy')!r}; valid: {', '.join(POLICIES)}")
    most = max(runs, max_runs) if t.get("policy") == "sequential" else runs
    if min_valid > most:
        raise UserError(f"trigger.min_valid={min_valid} can never be met with at most {most} runs "
                        "per query (trigger.runs / trigger.max_runs); every query would be "
                        "'insufficient'")


def _at_most_max_runs(key: str, runs: int) -> None:
    if runs > MAX_RUNS_PER_QUERY:
        raise UserError(f"{key}={runs} is above the limit of {MAX_RUNS_PER_QUERY} runs per query "
                        f"(at {MAX_RUNS_PER_QUERY} a query's 95 % interval is already about "
                        "±0.03 wide); use a smaller value")


def check_store(s: Any) -> None:
    if s is None:
        return
    number("store.flush_rows", s.get("flush_rows", 5000), int, low=1)
    number("store.flush_seconds", s.get("flush_seconds", 1.0), float, low=0)
    number("store.compact_hint_parts", s.get("compact_hint_parts", 0), int, low=0)


def check_functional(f: Any) -> None:
    if f is None:
        return
    number("functional.runs", f.get("runs", 3), int, low=1)
    number("functional.max_turns", f.get("max_turns", 20), int, low=1)
    number("functional.concurrency", f.get("concurrency", 4), int, low=1)
    number("functional.timeout_s", f.get("timeout_s", 600), float, low=0, low_open=True)
    number("functional.bootstrap", f.get("bootstrap", 2000), int, low=1)
    number("functional.confidence", f.get("confidence", 0.95), float, low=0, high=1,
           low_open=True, high_open=True)
    for key, allowed in (("arms", ARMS), ("tools", FILE_TOOLS + CLAUDE_CODE_TOOLS)):
        values = f.get(key)
        if values is None:
            continue
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise UserError(f"functional.{key} must be a list, got {values!r}")
        for v in values:
            if v not in allowed:
                raise UserError(f"functional.{key}: unknown {key[:-1]} {v!r}; valid: {', '.join(allowed)}")


def check_skill_lists(cfg: Any) -> None:
    d = cfg.get("distractors")
    if d is not None and (isinstance(d, (str, bytes)) or not hasattr(d, "__iter__")):
        raise UserError(f"distractors must be a list of skill folders (distractors=[path,...]), got {d!r}")


def check_skill_folders(cfg: Any) -> None:
    """The skill (``skill=``) and the distractors load, for every experiment, before the store
    opens: a mistyped path is refused (exit 2) without a failed run left in the store, and
    without loading the store's libraries. After `check_job_config` (distractors is a list)."""
    from skilleval.skills import load_skill

    for path in [cfg.get("skill"), *(cfg.get("distractors") or [])]:
        if path:
            load_skill(path)


def open_store_root(value: Any) -> Any:
    """`resolve_root(value)`, checked by `check_store_root` when it is a local folder."""
    from skilleval.store.catalog import resolve_root

    try:
        root = resolve_root(value)
    except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise UserError(f"store root {value}: {exc}") from None
    return check_store_root(root) if isinstance(root, Path) else root


def check_store_root(root: Path) -> Path:
    """The store root must be (or become) a real folder we can write: not a file, a device,
    a symlink loop or a path DuckDB's glob would misread (a backslash is its escape)."""
    text = str(root)
    if "\\" in text:
        raise UserError(f"store root {text!r} contains a backslash; use a path with '/' only")
    try:
        resolved = root.resolve(strict=False)
    except (RuntimeError, OSError) as exc:  # RuntimeError: "Symlink loop" (Python < 3.13)
        raise UserError(f"store root {text}: {exc}") from None
    if resolved.exists() and not resolved.is_dir():
        raise UserError(f"store root {text} is not a folder")
    try:
        resolved.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"store root {text}: cannot create it ({exc.strerror or exc})") from None
    if not os.access(resolved, os.W_OK | os.X_OK):
        raise UserError(f"store root {text}: not writable")
    return resolved


def check_budget(b: Any) -> None:
    """A cap below zero is a typo (0 is a real cap: stop before the first call)."""
    if b is None:
        return
    for key, kind in (("max_calls", int), ("max_usd", float)):
        if b.get(key) is not None:
            number(f"budget.{key}", b.get(key), kind, low=0)


def check_job_config(cfg: Any) -> None:
    """Every check above that applies to `cfg` (nodes an experiment does not use are absent)."""
    check_trigger(cfg.get("trigger"))
    check_budget(cfg.get("budget"))
    if cfg.get("seed") is not None:
        number("seed", cfg.get("seed"), int)
    check_store(cfg.get("store"))
    check_functional(cfg.get("functional"))
    check_skill_lists(cfg)
