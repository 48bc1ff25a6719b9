"""The diff as rich tables (regressions first, as a reviewer reads them)."""
from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe(text: object) -> str:
    """Queries and descriptions are hostile data: rich markup escaped, control characters
    shown as escapes instead of reaching the terminal."""
    return escape(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                               else f"\\u{ord(m.group()):04x}", str(text)))


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def _delta(d: dict[str, Any], pct: bool = True) -> str:
    if d.get("delta") is None:
        return "n/a"
    f = (lambda v: f"{v * 100:+.0f} pp") if pct else (lambda v: f"{v:+.2f}")
    if d.get("low") is None:  # too few runs for any interval at this confidence (stats)
        return f"{f(d['delta'])} (CI n/a: too few runs)"
    return f"{f(d['delta'])} [{f(d['low'])}, {f(d['high'])}]"


def _rate(side: dict[str, Any]) -> str:
    bad = side["errors"] + side["timeouts"]
    stopped = " (early-stopped)" if side.get("early_stopped") else ""
    return f"{side['triggers']}/{side['valid_runs']}" + (f" ({bad} err)" if bad else "") + stopped


def render(d: dict[str, Any], console: Console) -> None:
    a, b = d["a"], d["b"]
    console.print(f"[bold]A[/bold] {safe(a['label'])}  →  [bold]B[/bold] {safe(b['label'])}"
                  + (f"  ({safe(a['skill'])})" if a.get("skill") else ""))
    (_trigger if d["kind"] == "trigger" else _functional)(d, console)
    for note in d["notes"]:
        console.print(f"[dim]note:[/dim] {safe(note)}")


def _trigger(d: dict[str, Any], console: Console) -> None:
    level = int(d["confidence"] * 100)
    flips = d["flipped"]["regressed"] + d["flipped"]["fixed"]
    if flips:
        t = Table(title=f"flipped queries ({len(d['flipped']['regressed'])} regressed, "
                        f"{len(d['flipped']['fixed'])} fixed)", title_justify="left")
        for col in ("status", "query", "expect", "A", "B", f"rate change [{level}% CI]"):
            t.add_column(col, overflow="fold", max_width=60 if col == "query" else None)
        for r in flips:
            style = "red" if r["status"] == "regressed" else "green"
            t.add_row(f"[{style}]{r['status']}[/{style}]", safe(r["query"]),
                      "trigger" if r["should_trigger"] else "quiet", _rate(r["before"]),
                      _rate(r["after"]), _delta(r["rate_change"]))
        console.print(t)
    else:
        console.print("no query flipped")
    moved = sorted((r for r in d["queries"] if r["status"] not in ("regressed", "fixed")
                    and (r["rate_change"]["delta"] or 0) != 0),
                   key=lambda r: (r["rate_change"]["delta"] if r["should_trigger"] else -r["rate_change"]["delta"]))
    if moved:
        t = Table(title="rate changes without a flip (worst first)", title_justify="left")
        for col in ("query", "expect", "verdict", "A", "B", f"rate change [{level}% CI]"):
            t.add_column(col, overflow="fold", max_width=60 if col == "query" else None)
        for r in moved:
            t.add_row(safe(r["query"]), "trigger" if r["should_trigger"] else "quiet", r["status"],
                      _rate(r["before"]), _rate(r["after"]), _delta(r["rate_change"]))
        console.print(t)
    m, ds = d["mcnemar"], d["deltas"]
    t = Table(title=f"B − A over {d['paired']} paired queries ({level}% intervals)", title_justify="left")
    for col in ("metric", "delta", "method"):
        t.add_column(col)
    for name in ("accuracy", "precision", "recall"):
        t.add_row(name, _delta(ds[name]), ds[name]["method"])
    console.print(t)
    console.print(f"exact McNemar: {m['fixed']} fixed, {m['regressed']} regressed, p = {m['p_value']:.4g}")


def _functional(d: dict[str, Any], console: Console) -> None:
    level = int(d["confidence"] * 100)
    for arm, x in d["arms"].items():
        pr = x["pass_rate"]
        t = Table(title=f"arm {safe(arm)}: pass rate by eval (B − A)", title_justify="left")
        for col in ("eval", "A", "B", "delta"):
            t.add_column(col, justify="left" if col == "eval" else "right")
        for r in sorted(x["per_eval"], key=lambda r: (r["delta"] is None, r["delta"] or 0)):
            t.add_row(safe(r["eval"]), _pct(r["before"]), _pct(r["after"]),
                      "n/a" if r["delta"] is None else f"{r['delta'] * 100:+.0f} pp")
        console.print(t)
        p = "n/a" if pr["p_value"] is None else f"{pr['p_value']:.3g}"
        console.print(f"arm {safe(arm)}: pass-rate delta {_delta(pr)} ({level}% CI, over "
                      f"{pr.get('evals', d['compared'])} evals), permutation p = {p}")
