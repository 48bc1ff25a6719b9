"""Run a DuckDB call so that Ctrl-C stops it.

A long query (an aggregate over many rows) does not check for signals while it runs: Python
only sets a flag when SIGINT arrives, and the handler that raises KeyboardInterrupt runs when
the main thread next executes Python code -- after the query. ``skilleval sql`` over 10^11
rows ignored Ctrl-C for as long as it ran. Here the call runs in a worker thread while the
main thread waits in short joins, so the KeyboardInterrupt is raised at once; the query is
then stopped with ``interrupt()`` (DuckDB's way to cancel a running query from another
thread) and the interrupt goes on up. Off the main thread (the viewer's request threads),
the call runs in place: signals are the main thread's.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def interruptible(con: Any, work: Callable[[], T]) -> T:
    if threading.current_thread() is not threading.main_thread():
        return work()
    box: dict[str, Any] = {}
    done = threading.Event()  # not Thread.join: a join cut short by KeyboardInterrupt can
    # report the thread finished while it still runs (CPython's thread-state lock)

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
            box["error"] = exc
        finally:
            done.set()
    threading.Thread(target=target, name="duckdb-query", daemon=True).start()
    try:
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        con.interrupt()
        done.wait()  # the query stops at its next check; the connection is then free
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
