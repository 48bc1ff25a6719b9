"""What a proposer receives: the train results and earlier attempts, nothing held out.

See `skilleval.optimize.proposers` for the protocol. Kept apart so the ``llm`` proposer's
prompt module can use these types without importing the proposers.
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_CHARS = 1024


@dataclass(frozen=True)
class QueryScore:
    """One train query's result under one description."""

    query: str
    should_trigger: bool
    triggers: int
    runs: int  # valid runs
    passed: bool

    @property
    def rate(self) -> float:
        return self.triggers / self.runs if self.runs else 0.0


@dataclass(frozen=True)
class Attempt:
    """An earlier description and how it did on train (and only on train)."""

    iteration: int
    description: str
    train_passed: int
    train_total: int
    results: tuple[QueryScore, ...] = ()


@dataclass(frozen=True)
class Effect:
    """A mean change over train queries with its paired interval (None: no query measured)."""

    value: float | None
    low: float | None
    high: float | None
    queries: int


@dataclass(frozen=True)
class SentenceEffect:
    """What one sentence of the current description does on train (``optimize.attribution``):
    the change when it is kept versus removed (leave-one-out), in recall and in false-trigger
    rate. Positive recall: it earns triggers; positive false-trigger rate: it causes them."""

    index: int
    sentence: str
    recall: Effect
    false_trigger_rate: Effect


@dataclass(frozen=True)
class ProposalRequest:
    """Everything a proposer may know. There is deliberately no validation or test field."""

    skill_name: str
    skill_body: str
    current_description: str
    train_results: tuple[QueryScore, ...]
    history: tuple[Attempt, ...] = ()
    iteration: int = 1
    count: int = 3
    attribution: tuple[SentenceEffect, ...] = ()  # of the current description, on train only
    confidence: float = 0.95  # of the attribution intervals

    @property
    def train_passed(self) -> int:
        return sum(r.passed for r in self.train_results)

    @property
    def missed(self) -> tuple[QueryScore, ...]:
        """Should-trigger queries that did not trigger often enough."""
        return tuple(r for r in self.train_results if r.should_trigger and not r.passed)

    @property
    def false_triggers(self) -> tuple[QueryScore, ...]:
        return tuple(r for r in self.train_results if not r.should_trigger and not r.passed)

    def tried(self) -> set[str]:
        return {a.description for a in self.history} | {self.current_description}


def normalise(text: str) -> str:
    """One paragraph: whitespace runs collapsed, surrounding quotes stripped."""
    text = " ".join(text.split())
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text
