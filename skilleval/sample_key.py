"""Which repetition of a model request this is, said by the caller that knows.

A model sampling at a temperature answers the same prompt differently each time, and
serve-sim imitates that: an identical prompt gets its next sample. Counted by the server,
the sample a request gets depends on the order requests arrive in and on what the same
server answered before, so one functional_eval command gave different grades run to run
(the grader's prompts for two runs whose outputs are identical are identical too).

A caller that knows which repetition a request is -- the functional runner: this execution's
grade, judge sample k; the comparator: this pair, this order -- sets the key around the call
(:func:`keyed`). Our backends forward it to a *loopback* simulator in the ``x-skilleval-sim``
hint header (never to a real endpoint), and the simulator draws that answer from (prompt, key)
instead of from its counter. A real model is unaffected: it samples as it samples.

A context variable, not a parameter of ``complete()``: a judge plugin's own calls inherit it
without changing the backend contract (``hookspecs.py``), and asyncio copies the context into
each task, so concurrent grades keep their own keys.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_KEY: ContextVar[str | None] = ContextVar("skilleval_sample_key", default=None)


def current() -> str | None:
    """The key of the request being made in this context, or None (the simulator counts)."""
    return _KEY.get()


@contextmanager
def keyed(key: str) -> Iterator[None]:
    """Requests made inside the block are this repetition: ``key`` (any string, stable from
    run to run for the same work)."""
    token = _KEY.set(key)
    try:
        yield
    finally:
        _KEY.reset(token)
