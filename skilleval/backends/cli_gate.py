"""How many `claude` CLI processes may run at once: enough to keep the CPUs busy, no more.

A CLI trial spends its wall time in two ways: on the CPU (starting node, building the
request, reading the answer: about 0.45 s) and waiting for the API's answer. Against a fast
endpoint (serve-sim on loopback) the wait is a few per cent of the trial, the work is
CPU-bound, and more processes than CPUs only queue for the CPU and stretch every trial
(benchmarks/cli_orchestration.py). Against the real API the wait is seconds: a cap of one
process per CPU would leave the CPUs idle most of the time and make a run several times
slower than it needs to be.

So the cap follows Little's law: to keep ``C`` CPUs busy when a share ``w`` of each
process's life is spent waiting, ``C / (1 - w)`` processes are needed (rounded down). ``w`` is measured on
every trial from the CLI's own stream (from its ``init`` event, sent just before the request,
to the first event of the answer); a completion or a functional task, which runs to its end
and may make many requests, reports its API time in its ``result`` event
(``duration_api_ms``). The share is smoothed (EWMA, weight ``SMOOTHING``); the cap starts at
``C``, never goes below it, and never above ``ceiling`` (the trials a job keeps in flight,
``trigger.concurrency``, bound it anyway). ``backend.concurrency=N`` fixes the cap at N.

The measured wait is not all waiting for the API: when the CPUs are busy, a process that
has its answer waits for a CPU to read it, and a local endpoint (serve-sim) waits for a CPU
to write it. Under load that inflates ``w``, and a larger cap loads the CPUs further -- a
loop that once took the cap to 3 on 2 saturated CPUs (CI, with another test worker busy).
So the cap rises above what is in effect only after a window (``IdleMeter``, at least
``IDLE_WINDOW_S``) in which trials queued for a slot while the CPUs this process may use
were idle for at least ``IDLE_HEADROOM`` of the time; in a busy window it is held where it
is. More processes only help when there is idle CPU for them, and idle CPUs say nothing
when nothing was queued (before a job, or at its tail). An idle window lets the cap at most
double: ``w`` was measured at the load then, and one trial's share of 0.87 (the first,
at 1.5 s of latency) asked for 15 processes on 2 CPUs at once, which stretched every
trial to 5-6 s; doubling reaches that step by step, each step checked by the next window.
Hand-written (a counter under an `asyncio.Condition`): `asyncio.Semaphore` has no way to
change its size while waiters queue.

A slot is freed as soon as its process is sent SIGKILL, not when the process has been reaped
(``slot()`` yields an early ``release``): tearing down a killed node process takes 12-28 ms,
about 5 % of a trial on loopback, and holding the slot through it left that share of a CPU
idle at a cap equal to the CPUs. ``early_release=False`` keeps the old behaviour, for the
benchmark's paired comparison (``cli_orchestration.py --compare-hold``).

Measured on 2 CPUs, fresh clone at 6b66537, with the idle check and doubling
(``benchmarks/cli_orchestration.py``):

- ``--latency-ms 1500 --compare 2`` (40 trials, 3 paired passes): a cap fixed at the CPUs
  took 2.32x the wall time of this one (95 % CI 1.88-2.87), which peaked at 8 processes
  (1.97x [1.52, 2.56] at a34db80, when the cap could jump straight to its target);
- with no latency the cap stays at 2; ``--repeats 10 --compare-hold`` (60 trials): median
  wall/floor 1.058 (passes 1.02-1.18) with the early release, 1.113 holding the slot to the
  reap, which took 1.047x the wall time (paired 95 % CI 1.011-1.084); the CLIs kept
  1.89-1.92 CPUs busy against 1.84-1.87. At a34db80 the same run gave a median of 1.049:
  the ratio's spread between runs is as large as its distance from 1.05.
- 2026-12-03, fresh clone at c88ff74: ``--repeats 10`` median 1.062, geometric mean 1.044
  (95 % CI 1.003-1.087); ``--repeats 6 --compare 3`` (is rounding down right?) the default
  1.032 (1.007-1.056), one process more than the CPUs 1.060 and 1.028x the default's wall time
  (paired 95 % CI 0.991-1.066): it kept 1.93 CPUs busy against 1.91, and lost more than that
  to contention (CPU per trial 1.022x the probes' against 0.987x). API calls per trial 1.00 in
  every pass. What is left above the floor is mostly not CLI work: this process's own CPU
  (about 0.007 s a trial, 1.5 %), serve-sim's (0.5 %) and the batch's tail (0.8 %).
"""
from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import psutil

#: weight of the newest trial in the smoothed waiting share
SMOOTHING = 0.3
#: the waiting share is capped so that one odd trial cannot ask for an unbounded cap
MAX_WAIT_SHARE = 0.95
#: the cap may rise only after a window in which the CPUs were idle this share of the time
IDLE_HEADROOM = 0.10
#: the shortest window the idle share is measured over (shorter ones say little)
IDLE_WINDOW_S = 0.25
#: Linux's per-CPU time counters (see IdleMeter)
PROC_STAT = Path("/proc/stat")


class IdleMeter:
    """The share of time the CPUs this process may run on were idle, window by window.

    ``idle_share()`` returns the share since the previous window closed, once at least
    ``IDLE_WINDOW_S`` has passed, else None (the window stays open). Per-CPU counters summed
    over the affinity mask only: idle CPUs outside it cannot run our processes. They are read
    from ``/proc/stat``, whose ``cpuN`` lines name each CPU: with some CPUs offline the list
    has gaps, and psutil's per-CPU list (the same lines, without their names) would put
    CPU 2's counters at index 1. Where there is no /proc/stat (not Linux, and no affinity
    mask either), psutil's counters for every CPU.
    """

    def __init__(self, stat_path: Path | None = PROC_STAT, cpus: Sequence[int] | None = None) -> None:
        self._stat = stat_path if stat_path is not None and stat_path.is_file() else None
        if cpus is not None:
            self._cpus: list[int] | None = sorted(cpus)
        else:
            try:
                self._cpus = sorted(os.sched_getaffinity(0))
            except (AttributeError, OSError):  # not Linux: every CPU
                self._cpus = None
        self._last = self._sample()

    def restart(self) -> None:
        """Drop the open window: what the CPUs did until now says nothing about the cap."""
        self._last = self._sample()

    def _counters(self) -> list[tuple[float, float]]:
        """(idle, total) of each CPU we may use, in any one unit."""
        if self._stat is not None:
            by_id = proc_stat_cpus(self._stat.read_text(encoding="ascii", errors="replace"))
            ids = self._cpus if self._cpus is not None else sorted(by_id)
            return [by_id[i] for i in ids if i in by_id]  # an offline CPU has no line
        out = []
        for t in psutil.cpu_times(percpu=True):
            # guest time is already inside user time on Linux: leave it out of the total
            total = sum(t) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)
            out.append((t.idle + getattr(t, "iowait", 0.0), total))
        return out

    def _sample(self) -> tuple[float, float, float]:
        counters = self._counters()
        return time.monotonic(), sum(c[0] for c in counters), sum(c[1] for c in counters)

    def idle_share(self) -> float | None:
        if time.monotonic() - self._last[0] < IDLE_WINDOW_S:
            return None  # the window stays open (and /proc/stat is not read on every trial)
        now = self._sample()
        (_, idle0, total0), self._last = self._last, now
        spent = now[2] - total0
        return None if spent <= 0 else min(max((now[1] - idle0) / spent, 0.0), 1.0)


def proc_stat_cpus(text: str) -> dict[int, tuple[float, float]]:
    """CPU id -> (idle + iowait, total) in clock ticks, from the ``cpuN`` lines of /proc/stat
    (proc(5): user nice system idle iowait irq softirq steal guest guest_nice). guest and
    guest_nice are already counted in user and nice, so the total leaves them out."""
    out: dict[int, tuple[float, float]] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not (name.startswith("cpu") and name[3:].isdigit()):
            continue
        ticks = [float(x) for x in rest.split()[:8]]
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0.0)
        out[int(name[3:])] = (idle, sum(ticks))
    return out


class ProcessGate:
    """A cap on CLI processes at once that adapts to the measured waiting share (see the
    module docstring). One gate serves one backend; its asyncio parts are made per event loop
    (a job may run several loops one after another), its measurement carries over."""

    def __init__(self, cpus: int, *, fixed: int | None = None, ceiling: int = 64,
                 early_release: bool = True, meter: IdleMeter | None = None) -> None:
        """``meter``: where the CPUs' idle share comes from; None means no such evidence is
        asked for, and the waiting share alone sets the cap (the unit tests' arithmetic)."""
        self.cpus = max(1, cpus)
        self.early_release = early_release  # see the module docstring
        self.fixed = fixed
        self.ceiling = max(self.cpus, ceiling)
        self.meter = meter
        # the highest the cap may go until a window shows idle CPUs (see the module docstring)
        self._limit = self.cpus if meter is not None else self.ceiling
        self.wait_share: float | None = None  # smoothed; None until a trial reports
        self.active = 0
        self.waiting = 0  # trials queued for a slot now
        self.peak = 0  # most processes at once so far (reported by benchmarks and tests)
        self._loop: int | None = None
        self._cond: asyncio.Condition | None = None

    @property
    def cap(self) -> int:
        if self.fixed is not None:
            return self.fixed
        w = min(self.wait_share or 0.0, MAX_WAIT_SHARE)
        # rounded down: one process too many queues on the CPU and stretches every trial,
        # one too few leaves part of a CPU idle (the cheaper mistake near the boundary)
        return max(self.cpus, min(self.ceiling, self._limit, int(self.cpus / (1.0 - w))))

    def observe(self, wall_s: float, wait_s: float | None) -> None:
        """One finished trial: its wall time and the part of it spent waiting for the API."""
        idle = None
        if self.meter is not None and self.waiting == 0:
            self.meter.restart()  # nothing queued: the cap held nothing back in this window
        elif self.meter is not None:
            idle = self.meter.idle_share()
        if idle is not None:
            # idle CPUs: the waiting share may set the cap, up to twice the cap in effect;
            # busy ones: hold the cap in effect
            self._limit = min(self.ceiling, 2 * self.cap) if idle >= IDLE_HEADROOM else self.cap
        if wait_s is None or wall_s <= 0:
            return
        share = min(max(wait_s / wall_s, 0.0), 1.0)
        self.wait_share = share if self.wait_share is None else \
            (1 - SMOOTHING) * self.wait_share + SMOOTHING * share

    def _condition(self) -> asyncio.Condition:
        loop = id(asyncio.get_running_loop())
        if self._cond is None or self._loop != loop:
            self._loop, self._cond, self.active, self.waiting = loop, asyncio.Condition(), 0, 0
        return self._cond

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Callable[..., Awaitable[None]]]:
        """Hold one process slot. Yields ``release``: awaited once the process is signalled,
        it frees the slot then (a killed process's teardown needs no slot); otherwise, or
        with ``early_release`` off, the slot is freed on leaving the block. Freed once."""
        cond = self._condition()
        async with cond:
            self.waiting += 1
            try:
                await cond.wait_for(lambda: self.active < self.cap)
            finally:
                self.waiting -= 1
            self.active += 1
            self.peak = max(self.peak, self.active)
        held = True

        async def release(*, final: bool = False) -> None:
            nonlocal held
            if held and (final or self.early_release):
                held = False
                async with cond:
                    self.active -= 1
                    cond.notify_all()  # the cap may have grown: wake every waiter to re-check
        try:
            yield release
        finally:
            await release(final=True)
