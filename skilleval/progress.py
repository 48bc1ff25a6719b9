"""Progress for long work: a rich bar in a terminal, a plain periodic line elsewhere.

Why a proxy: runners are built before the progress display opens (the optimiser builds its
runner at set-up), so they hold `LiveProgress`, which forwards to whichever display the job
has open at the moment a task starts, instead of a reference captured at construction
(which was None: no bar ever appeared).

Why a hand-written `PlainProgress`: rich's Progress draws nothing useful when stderr is a
file or a CI log (it renders once at the end), and a run that waits on a slow or
unreachable backend must still say that it is alive. It implements the few Progress
methods the runners call and prints one line every `every` seconds from a daemon thread.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from rich.console import Console


class LiveProgress:
    """Forwards add_task / advance / remove_task to the job's open display, if any."""

    def __init__(self, current: Callable[[], Any]) -> None:
        self._current = current

    def add_task(self, description: str, total: float | None = None, **kw: Any) -> Any:
        prog = self._current()
        return None if prog is None else (prog, prog.add_task(description, total=total, **kw))

    def advance(self, task: Any, advance: float = 1) -> None:
        if task is not None:
            task[0].advance(task[1], advance)

    def remove_task(self, task: Any) -> None:
        if task is not None:
            task[0].remove_task(task[1])


class PlainProgress:
    """`progress: <task> 12/40 · 35 s` every `every` seconds while the block runs."""

    def __init__(self, console: Console, every: float, what: str) -> None:
        self.console = console
        self.every = max(0.05, every)
        self.what = what
        self._tasks: dict[int, list[Any]] = {}  # id -> [description, completed, total]
        self._next = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def __enter__(self) -> "PlainProgress":
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._tick, name="skilleval-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        with self._lock:
            self._next += 1
            self._tasks[self._next] = [description, 0.0, total]
            return self._next

    def advance(self, task: int, advance: float = 1) -> None:
        with self._lock:
            if task in self._tasks:
                self._tasks[task][1] += advance

    def update(self, task: int, **kw: Any) -> None:
        with self._lock:
            t = self._tasks.get(task)
            if t is not None:
                t[0] = kw.get("description", t[0])
                t[1] = kw.get("completed", t[1])
                t[2] = kw.get("total", t[2])

    def remove_task(self, task: int) -> None:
        with self._lock:
            self._tasks.pop(task, None)

    def line(self) -> str:
        with self._lock:
            parts = [f"{d} {c:g}/{t:g}" if t else f"{d} {c:g}" for d, c, t in self._tasks.values()]
        elapsed = time.monotonic() - self._started
        return f"progress: {self.what}: {', '.join(parts) or 'working'} · {elapsed:.0f} s"

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            # markup off: task names come from skill folders (hostile data)
            self.console.print(self.line(), markup=False, highlight=False, soft_wrap=True)
