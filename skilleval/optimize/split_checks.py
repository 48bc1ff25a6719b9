"""The core's check of a splitter's answer (``trigger_opt``), whoever wrote the splitter.

A plugin splitter is trusted with nothing: a test query that is also in train makes the
held-out number a training number, a dropped query is silently never measured, and a train
split without both classes gives the proposer nothing to learn precision or recall from. The
rules are the ones ``skilleval.hookspecs.register_splitters`` documents; any violation is a
`UserError` (exit 2) naming the splitter, before the first call.
"""
from __future__ import annotations

from typing import Any, Sequence

from skilleval.domain import TriggerCase
from skilleval.errors import SkillevalError, UserError
from skilleval.optimize.splitters import SPLITS, Split, check_two_classes
from skilleval.terminal import visible_line


def split_cases(job: Any, cases: Sequence[TriggerCase]) -> Split:
    """Build the job's splitter, split `cases` with it and check the result."""
    name = str(job.cfg.splitter.get("name"))
    splitter = job.build("splitter", job.cfg.splitter)
    try:
        split = splitter.split(cases)
    except SkillevalError:
        raise
    except Exception as exc:  # noqa: BLE001 - a splitter's bug: one line, not a traceback
        raise UserError(f"splitter={name} failed: {type(exc).__name__}: {visible_line(exc)}") from None
    return checked_split(name, split, cases)


def checked_split(name: str, split: Any, cases: Sequence[TriggerCase]) -> Split:
    """`split` if it is a `Split` whose parts are disjoint, together hold every case of
    `cases` (and no other), and whose train has both should_trigger classes; else UserError."""
    if not isinstance(split, Split):
        raise UserError(f"splitter={name} returned a {type(split).__name__}, not a "
                        "skilleval.optimize.splitters.Split")
    ids = {c.id: c for c in cases}
    where: dict[str, str] = {}
    for part in SPLITS:
        members = split.of(part)
        if not isinstance(members, (tuple, list)):
            raise UserError(f"splitter={name}: its {part} split is a {type(members).__name__}, "
                            "not a tuple of cases")
        for c in members:
            cid = getattr(c, "id", None)
            if cid not in ids:
                raise UserError(f"splitter={name}: its {part} split holds {visible_line(repr(c))[:80]}, "
                                "which is not a case of the eval set")
            if cid in where:
                also = "twice" if where[cid] == part else f"in both {where[cid]} and {part}"
                raise UserError(f"splitter={name} put case {cid!r} ({ids[cid].query[:50]!r}) {also}; "
                                "the splits must be disjoint")
            where[cid] = part
    missing = [c for c in cases if c.id not in where]
    if missing:
        raise UserError(f"splitter={name} left {len(missing)} of {len(cases)} case(s) out of every "
                        f"split (first: {missing[0].id!r}, {missing[0].query[:50]!r}); every case "
                        "must be in train, validation or test")
    check_two_classes(tuple(split.train), f"splitter={name}'s train split")
    return split
