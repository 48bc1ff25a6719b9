"""The command-line flags of ``skilleval serve-sim``: one per ``SimConfig`` field, each with a
help line (what it does, in which unit) and a parser that refuses a value out of range.

Kept beside ``SimConfig`` rather than in ``server.py`` so that a new config field without a
help line fails ``test_every_config_field_has_a_help_line`` instead of showing up bare in
``--help``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable
from typing import Any

from skilleval.sim.config import SimConfig


def _number(kind: type, low: float | None = None, high: float | None = None,
            what: str = "") -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what or kind.__name__}, got {text!r}") from None
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    parse.__name__ = what or kind.__name__  # argparse names the type in its messages
    return parse


def _rate(text: str) -> float:
    return _number(float, 0.0, 1.0, "a share between 0 and 1")(text)


def _millis(text: str) -> float:
    return _number(float, 0.0, None, "milliseconds >= 0")(text)


def _count(text: str) -> int:
    return _number(int, 0, None, "a whole number >= 0")(text)


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _retry_after(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    return _number(float, 0.0, None, "seconds >= 0 or 'none'")(text)


def _statuses(text: str) -> list[int]:
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if not part.isdigit() or not 100 <= int(part) <= 599:
            raise argparse.ArgumentTypeError(f"expected HTTP statuses like 529,429, got {text!r}")
        out.append(int(part))
    return out


def _tool_calls(text: str) -> list[dict[str, Any]]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, list) or not all(
            isinstance(v, dict) and isinstance(v.get("name"), str) for v in value):
        raise argparse.ArgumentTypeError('expected a JSON list of {"name": ..., "input": {...}}')
    return value


def _finite(text: str) -> float:
    return _number(float, -1e6, 1e6, "a number")(text)


def _positive(text: str) -> float:
    return _number(float, 1e-6, 1e6, "a number > 0")(text)


# field -> (metavar, parser, help). Units are in the help line, as the user reads it.
FLAGS: dict[str, tuple[str, Callable[[str], Any], str]] = {
    "latency_ms": ("MS", _millis, "delay before the response headers (time to first byte), "
                   "in milliseconds (default 0)"),
    "latency_jitter_ms": ("MS", _millis, "uniform random +/- spread added to --latency-ms, in "
                          "milliseconds (default 0)"),
    "chunk_delay_ms": ("MS", _millis, "pause between streamed SSE events, in milliseconds "
                       "(default 0)"),
    "overloaded_rate": ("SHARE", _rate, "share of /v1/messages requests answered 529 "
                        "overloaded_error, 0-1 (default 0)"),
    "rate_limit_rate": ("SHARE", _rate, "share of /v1/messages requests answered 429 "
                        "rate_limit_error, 0-1 (default 0)"),
    "server_error_rate": ("SHARE", _rate, "share of /v1/messages requests answered 500 "
                          "api_error, 0-1 (default 0)"),
    "stream_error_rate": ("SHARE", _rate, "share of streamed answers that send an "
                          "'event: error' mid-way, 0-1 (default 0)"),
    "stream_cut_rate": ("SHARE", _rate, "share of streamed answers cut after message_start "
                        "(a dropped connection), 0-1 (default 0)"),
    "retry_after_s": ("SECONDS", _retry_after, "retry-after header sent with 429 and 529, in "
                      "seconds; 'none' sends no header (default 1)"),
    "fail_next": ("S1,S2", _statuses, "HTTP statuses answered, in order, to the next "
                  "requests before any random fault; 200 means a mid-stream error"),
    "orient_rate": ("SHARE", _rate, "share of trigger turns that first make an orientation "
                    "tool call before deciding, 0-1 (default 0)"),
    "seed": ("N", int, "seed of the fault, latency and orientation draws (trigger decisions "
             "are seeded per trial, like the stub's); default 0"),
    "cache_min_tokens": ("TOKENS", _count, "smallest cacheable prompt prefix, in tokens "
                         "(default 1024)"),
    "batch_delay_ms": ("MS", _millis, "how long a message batch stays in_progress, in "
                       "milliseconds (default 200)"),
    "require_auth": ("BOOL", _bool, "answer 401 to requests without an API key: true or "
                     "false (default true)"),
    "record_bodies": ("N", _count, "keep the last N /v1/messages request bodies for "
                      "GET /_sim/requests, a count (default 0: keep none)"),
    "hostile_skill_name": ("NAME", str, "hostile-model tests: the skill name the model's "
                           "Skill calls use instead of the one it decided"),
    "hostile_tool_calls": ("JSON", _tool_calls, "hostile-model tests: tool_use blocks "
                           "answered first, one per request offering that tool, e.g. "
                           '[{"name": "read_file", "input": {"path": "../x"}}]'),
    "slope": ("X", _positive, "calibration: steepness of the logistic from relevance score to "
              "trigger probability, per unit of score (default %(default)s)"),
    "midpoint": ("SCORE", _finite, "calibration: relevance score at which a skill triggers "
                 "half the time, in score units (default %(default)s)"),
    "exclusion_penalty": ("SCORE", _finite, "calibration: score subtracted per query word "
                          "that the description excludes, in score units (default %(default)s)"),
    "competitor_temperature": ("T", _positive, "calibration: softmax temperature choosing "
                               "among listed skills, in score units; lower means the best match "
                               "wins more often (default %(default)s)"),
}


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """One ``--kebab-name`` flag per ``SimConfig`` field; unset flags stay ``None`` so the
    config keeps its own default."""
    defaults = SimConfig()
    for f in dataclasses.fields(SimConfig):
        metavar, parse, help_text = FLAGS[f.name]
        shown = getattr(defaults, f.name)
        parser.add_argument("--" + f.name.replace("_", "-"), type=parse, default=None,
                            metavar=metavar, help=help_text.replace("%(default)s", str(shown)))
