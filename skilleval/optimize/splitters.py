"""Splitters: divide an eval set into train / validation / test (config group ``splitter``).

Protocol: a splitter is any object with ``split(cases) -> Split``. The built-ins:

* ``stratified`` (default): train / validation / test, 50/25/25 by default, stratified by
  ``should_trigger`` with a fixed seed. Every class gets at least one query in every split
  with a non-zero fraction, so train never lacks a class; a class too small for that is a
  ``UserError``.
* ``holdout``: two-way train / test (skill-creator's ``--holdout 0.4``: 60/40). There is no
  validation split, so ``trigger_opt`` selects candidates by their *train* scores (the
  optimistic choice skill-creator makes, without its peeking at test).
* ``none``: everything is train (no held-out number; selection by train).
* ``fixed``: each case's own ``split`` field (``train``, ``validation``/``val``/``dev``,
  ``test``); a case without one is an error.

Every splitter is deterministic: the same cases and parameters give the same split, which
``trigger_opt`` relies on to resume a killed run.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Protocol, Sequence

from skilleval.domain import TriggerCase
from skilleval.errors import UserError

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class Split:
    train: tuple[TriggerCase, ...]
    validation: tuple[TriggerCase, ...] = ()
    test: tuple[TriggerCase, ...] = ()

    def of(self, name: str) -> tuple[TriggerCase, ...]:
        return getattr(self, name)

    def label(self, case_id: str) -> str | None:
        for name in SPLITS:
            if any(c.id == case_id for c in self.of(name)):
                return name
        return None

    def sizes(self) -> dict[str, int]:
        return {name: len(self.of(name)) for name in SPLITS}


class Splitter(Protocol):
    def split(self, cases: Sequence[TriggerCase]) -> Split: ...


def check_two_classes(cases: Sequence[TriggerCase], what: str = "the eval set") -> None:
    """An optimiser needs both should-trigger and should-not-trigger queries."""
    pos = sum(1 for c in cases if c.should_trigger)
    neg = len(cases) - pos
    if not cases:
        raise UserError(f"{what} is empty")
    if pos == 0 or neg == 0:
        have, missing = ("true", "false") if neg == 0 else ("false", "true")
        raise UserError(
            f"{what} has only should_trigger={have} queries ({len(cases)}); add queries with "
            f"should_trigger={missing} (near-misses) so precision and recall can both be measured"
        )


def _by_class(cases: Sequence[TriggerCase]) -> list[list[TriggerCase]]:
    return [[c for c in cases if c.should_trigger], [c for c in cases if not c.should_trigger]]


def _apportion(sizes: list[int], fractions: dict[str, float]) -> list[dict[str, int]]:
    """How many of each class go to each held-out split.

    Global targets are ``round(N * fraction)``; each class gets ``floor(n * fraction)`` and
    the remainders go to the classes with the largest fractional parts (ties alternate, so a
    10/10 set at 25 % gives 3+2 and 2+3 rather than 3+3). Every class gets at least one.
    """
    total = sum(sizes)
    out: list[dict[str, int]] = [{} for _ in sizes]
    turn = 0
    for name, frac in fractions.items():
        quotas = [n * frac for n in sizes]
        counts = [max(1, math.floor(q)) for q in quotas]
        target = max(len(sizes), math.floor(total * frac + 0.5))
        order = sorted(range(len(sizes)),
                       key=lambda i: (-(quotas[i] - math.floor(quotas[i])), (i + turn) % len(sizes)))
        k = 0
        while sum(counts) < target and k < len(order):
            counts[order[k]] += 1
            k += 1
        turn += 1
        for i, n in enumerate(counts):
            out[i][name] = n
    return out


def _stratify(cases: Sequence[TriggerCase], seed: int, fractions: dict[str, float],
              splitter: str) -> Split:
    check_two_classes(cases)
    classes = _by_class(cases)
    need = 1 + len(fractions)
    labels = ("should_trigger=true", "should_trigger=false")
    for label, members in zip(labels, classes):
        if len(members) < need:
            raise UserError(
                f"splitter={splitter} needs at least {need} {label} queries (one per split, "
                f"train included); the eval set has {len(members)}. Add queries, or use "
                f"splitter=holdout / splitter=none"
            )
    plan = _apportion([len(m) for m in classes], fractions)
    parts: dict[str, list[TriggerCase]] = {name: [] for name in SPLITS}
    for cls, (members, counts) in enumerate(zip(classes, plan)):
        shuffled = sorted(members, key=lambda c: c.id)
        random.Random(f"{seed}:{cls}").shuffle(shuffled)
        start = 0
        for name in fractions:
            parts[name].extend(shuffled[start:start + counts[name]])
            start += counts[name]
        if start >= len(shuffled):  # cannot happen after the size check; keep train non-empty
            raise UserError(f"splitter={splitter}: fractions leave no {labels[cls]} query in train")
        parts["train"].extend(shuffled[start:])
    order = {c.id: i for i, c in enumerate(cases)}
    return Split(*(tuple(sorted(parts[n], key=lambda c: order[c.id])) for n in SPLITS))


@dataclass
class StratifiedParams:
    seed: int = 42
    validation: float = 0.25
    test: float = 0.25


class StratifiedSplitter:
    """Three-way split stratified by should_trigger (train gets what is left)."""

    def __init__(self, params: StratifiedParams) -> None:
        if params.validation < 0 or params.test < 0 or params.validation + params.test >= 1:
            raise UserError("splitter.validation and splitter.test must be >= 0 and sum to < 1")
        self.params = params

    def split(self, cases: Sequence[TriggerCase]) -> Split:
        fr = {k: v for k, v in (("validation", self.params.validation),
                                ("test", self.params.test)) if v > 0}
        return _stratify(cases, self.params.seed, fr, "stratified")


@dataclass
class HoldoutParams:
    seed: int = 42
    holdout: float = 0.4


class HoldoutSplitter:
    """Two-way train/test split (skill-creator's protocol); no validation split."""

    def __init__(self, params: HoldoutParams) -> None:
        if not 0 <= params.holdout < 1:
            raise UserError("splitter.holdout must be in [0, 1)")
        self.params = params

    def split(self, cases: Sequence[TriggerCase]) -> Split:
        fr = {"test": self.params.holdout} if self.params.holdout > 0 else {}
        return _stratify(cases, self.params.seed, fr, "holdout")


class NoSplitter:
    """Everything is train."""

    def __init__(self, params: object = None) -> None:
        pass

    def split(self, cases: Sequence[TriggerCase]) -> Split:
        check_two_classes(cases)
        return Split(tuple(cases))


_ALIASES = {"train": "train", "validation": "validation", "val": "validation", "dev": "validation",
            "valid": "validation", "test": "test", "holdout": "test"}


class FixedSplitter:
    """Use each case's own ``split`` field."""

    def __init__(self, params: object = None) -> None:
        pass

    def split(self, cases: Sequence[TriggerCase]) -> Split:
        check_two_classes(cases)
        parts: dict[str, list[TriggerCase]] = {n: [] for n in SPLITS}
        for c in cases:
            if not c.split:
                raise UserError(f"splitter=fixed: case {c.id!r} ({c.query[:50]!r}) has no 'split' field")
            name = _ALIASES.get(c.split.strip().lower())
            if name is None:
                raise UserError(f"splitter=fixed: case {c.id!r} has split={c.split!r}; "
                                f"expected train, validation or test")
            parts[name].append(c)
        check_two_classes(parts["train"], "the train split")
        return Split(*(tuple(parts[n]) for n in SPLITS))
