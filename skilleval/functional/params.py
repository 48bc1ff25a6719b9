"""Params dataclasses of the built-in judges (their fields are Hydra keys: ``judge.samples=3``).

Kept apart from the judges so registering them at start-up imports nothing heavy.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LlmGraderParams:
    samples: int = 1  # grade k times; the verdict is the majority, agreement is reported
    max_retries: int = 1  # re-asks after an invalid (non-JSON / wrong-shape) reply
    max_tokens: int = 4096


@dataclass
class CheckParams:
    """The built-in deterministic checks take their options from the expectation itself."""
