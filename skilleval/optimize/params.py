"""Parameters of the optimiser's proposers, in a module of their own.

Why separate: registration needs the params classes (they become Hydra config nodes) at every
CLI start, while the proposers import YAML and the prompt code; registration imports only
this module, the proposer's module when a job builds it.
"""
from __future__ import annotations

from dataclasses import dataclass

from skilleval.optimize.proposal import MAX_CHARS


@dataclass
class LLMParams:
    max_attempts: int = 3
    max_tokens: int = 2048
    max_chars: int = MAX_CHARS


@dataclass
class StubProposerParams:
    max_chars: int = MAX_CHARS
