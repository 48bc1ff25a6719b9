"""The routing run's terminal tables: its confusion matrix and its per-skill figures.

A matrix over N skills has N + 3 columns headed by skill names; with ten skills in 80
columns rich folds every name into three-letter pieces and nothing can be read. So the
matrix takes the first layout that fits the console's width:

1. ``full``: columns headed by the skill names (as before, when they fit);
2. ``keyed``: columns headed by short keys (1, 2, ...), each row labelled with its key and
   its name (shortened with an ellipsis if need be), and a ``key`` column in the per-skill
   table below as the legend with the full names;
3. ``cells``: too many skills even for keys: one line per non-zero cell
   (expected, fired, trials), readable at any width.

Skill names are hostile data: every one is escaped (rich markup and control characters).
"""
from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from skilleval.terminal import safe

TITLE = "routing confusion matrix (trials; rows expected, columns fired)"
#: the narrowest a keyed row label may get ("10 changelog-w…") before the long form is used
MIN_LABEL = 12


def _width(console: Console, table: Table) -> int:
    """The table's natural width (a measurement within the console's width is capped by it)."""
    return Measurement.get(console, console.options.update(max_width=1_000_000), table).maximum


def _full(m: dict[str, Any]) -> Table:
    table = Table(title=TITLE)
    table.add_column("expected \\ fired", overflow="fold")
    for c in m["columns"]:
        table.add_column(safe(c), justify="right", overflow="fold")
    for e, row in m["matrix"].items():
        table.add_row(safe(e), *(str(row[c]) for c in m["columns"]))
    return table


def keys(m: dict[str, Any]) -> dict[str, str]:
    """Skill name -> its short key (1, 2, ...); none, other and error keep their names."""
    return {s: str(i) for i, s in enumerate(m["skills"], 1)}


def _keyed(m: dict[str, Any], label_width: int | None) -> Table:
    k = keys(m)
    table = Table(title=TITLE, caption="columns: skill keys (the rows, and the per-skill table, "
                                       "name them)", box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("expected", no_wrap=True, overflow="ellipsis", max_width=label_width)
    for c in m["columns"]:
        table.add_column(k.get(c, c), justify="right", no_wrap=True)
    for e, row in m["matrix"].items():
        label = f"{k[e]} {e}" if e in k else e
        table.add_row(safe(label), *(str(row[c]) for c in m["columns"]))
    return table


def _cells(m: dict[str, Any]) -> Table:
    table = Table(title=f"{TITLE}: too many skills for a grid at this width, non-zero cells only",
                  box=box.SIMPLE_HEAD)
    for col, just in (("expected", "left"), ("fired", "left"), ("trials", "right")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for e, row in m["matrix"].items():
        for c in m["columns"]:
            if row[c]:
                table.add_row(safe(e), safe(c), str(row[c]))
    return table


def matrix_table(m: dict[str, Any], console: Console) -> tuple[str, Table]:
    """The layout that fits `console` (``full``, ``keyed`` or ``cells``) and its table."""
    full = _full(m)
    if _width(console, full) <= console.width:
        return "full", full
    stub = _width(console, _keyed(m, 1))  # everything but the row labels
    room = console.width - stub + 1
    if room >= MIN_LABEL:
        return "keyed", _keyed(m, room)
    return "cells", _cells(m)


def per_skill_table(m: dict[str, Any], confidence: float, keyed: bool) -> Table:
    per = Table(title=f"per skill (over trials; {confidence * 100:g}% intervals over queries)")
    k = keys(m)
    cols = (("key",) if keyed else ()) + ("skill", "precision", "recall")
    for col in cols:
        # a name is folded, never cut short: this table is the legend of the keyed matrix
        per.add_column(col, justify="right" if col == "key" else "left",
                       overflow="fold" if col == "skill" else "ellipsis")
    for s, v in m["per_skill"].items():
        per.add_row(*((k[s],) if keyed else ()), safe(s), *(fmt(v[x]) for x in ("precision", "recall")))
    return per


def print_tables(m: dict[str, Any], confidence: float, console: Console) -> None:
    layout, table = matrix_table(m, console)
    console.print(table)
    console.print(per_skill_table(m, confidence, keyed=layout == "keyed"))


def fmt(e: dict[str, Any]) -> str:
    if e["value"] is None:
        return "n/a (0 trials)"
    return f"{e['value']:.2f} [{e['low']:.2f}, {e['high']:.2f}] ({e['k']}/{e['n']})"
