"""Is this exception a Ctrl-C in disguise?

DuckDB checks for a pending SIGINT while it runs a query and turns it into its own exception:
``InterruptException``, ``RuntimeError('Query interrupted')``, or, inside a scan of a
registered Arrow table, ``InvalidInputException('... failed: KeyboardInterrupt')``. The
KeyboardInterrupt itself is consumed, so a Ctrl-C that landed during a store read showed a
traceback, exit 1, and the run stored as ``failed`` instead of exit 130 and ``interrupted``
(reproduced 2 times in 7 with ``timeout -s INT 1.3``). Callers that handle KeyboardInterrupt
also handle what this recognises.
"""
from __future__ import annotations


def caused_by_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, KeyboardInterrupt) or type(e).__name__ == "InterruptException":
            return True
        text = str(e)
        if type(e).__module__ in ("duckdb", "_duckdb") and "KeyboardInterrupt" in text:
            return True
        if type(e) is RuntimeError and text == "Query interrupted":
            return True
        e = e.__cause__ or e.__context__
    return False
