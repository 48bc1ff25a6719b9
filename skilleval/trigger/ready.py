"""The trials of a trigger run waiting for a worker, in the order they should start."""
from __future__ import annotations

import heapq
import itertools
from typing import Generic, TypeVar

from skilleval.domain import Trial

S = TypeVar("S")


class ReadyTrials(Generic[S]):
    """(query state, trial) pairs, lowest repeat first, then as queued.

    Why not first in, first out: a query's planned runs are queued together, so a run the
    budget stopped had measured the first queries of the eval set (often every should-trigger
    one) with all their runs and the rest with none. Now every query gets a first run before
    any query gets a second, and a stopped run's partial figures cover the whole eval set."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, tuple[S, Trial]]] = []
        self._order = itertools.count()

    def __bool__(self) -> bool:
        return bool(self._heap)

    def append(self, item: tuple[S, Trial]) -> None:
        heapq.heappush(self._heap, (item[1].repeat, next(self._order), item))

    def popleft(self) -> tuple[S, Trial]:
        return heapq.heappop(self._heap)[2]
