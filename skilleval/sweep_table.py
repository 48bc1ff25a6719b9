"""The table a sweep ends with: one row per job, what it varied and what it measured.

Each finished job leaves a `JobOutcome` in `FINISHED`, and the CLI prints the table when the
sweep is over. A job a launcher ran in another process (joblib, submitit, Ray) sends its row
back with its exit code (`job_exit`); one whose file cannot reach the CLI (a remote node
without the folder) is missing from the table, and the store (`skilleval sql "... where
sweep_id = ..."`) still holds it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from skilleval.terminal import PlainConsole
from rich.markup import escape
from rich.table import Table


@dataclass
class JobOutcome:
    job_num: int
    run_id: str
    sweep_id: str
    experiment: str
    status: str
    overrides: list[str]
    summary: dict[str, Any] = field(default_factory=dict)


    def to_wire(self) -> dict[str, Any]:
        """What the table needs of a job a launcher ran in another process (`job_exit`
        carries it back as JSON): the summary's gate figures and gate results only."""
        import json

        summary = {k: self.summary[k] for k in ("gate_metrics", "gates") if k in self.summary}
        wire = {"job_num": self.job_num, "run_id": self.run_id, "sweep_id": self.sweep_id,
                "experiment": self.experiment, "status": self.status,
                "overrides": list(self.overrides), "summary": summary}
        return json.loads(json.dumps(wire, default=str))

    @classmethod
    def from_wire(cls, d: dict[str, Any]) -> "JobOutcome":
        return cls(int(d["job_num"]), str(d["run_id"]), str(d["sweep_id"]), str(d["experiment"]),
                   str(d["status"]), [str(o) for o in d["overrides"]], dict(d.get("summary") or {}))


FINISHED: list[JobOutcome] = []


def _metric(summary: dict[str, Any], name: str) -> str:
    m = (summary.get("gate_metrics") or {}).get(name) or {}
    if m.get("value") is None:
        return "—"
    if name == "delta":
        return f"{m['value']:+.2f} " + ("(CI n/a)" if m.get("low") is None else f"[{m['low']:+.2f}, {m['high']:+.2f}]")
    return f"{m['value']:.0%} [{m['low']:.0%}–{m['high']:.0%}]"


def _gates(summary: dict[str, Any]) -> str:
    gates = summary.get("gates")
    if not gates:
        return ""
    if not all(g.get("checked", True) for g in gates):  # e.g. a budget stop: never "passed"
        return "not checked"
    failed = sum(not g["passed"] for g in gates)
    return f"{failed} failed" if failed else "passed"


def print_sweep_table(jobs: list[JobOutcome], console: Console) -> None:
    if not jobs:
        return
    shared = set.intersection(*(set(j.overrides) for j in jobs))
    table = Table(title=f"sweep {jobs[0].sweep_id}: {len(jobs)} jobs", title_justify="left",
                  caption=f"same in every job: {escape(' '.join(sorted(shared)))}" if shared else None)
    for col in ("job", "varied", "status", "precision", "recall", "accuracy", "delta", "gates", "run"):
        table.add_column(col, overflow="fold")
    for j in sorted(jobs, key=lambda j: j.job_num):
        table.add_row(str(j.job_num), escape(" ".join(o for o in j.overrides if o not in shared)), j.status,
                      *(_metric(j.summary, n) for n in ("precision", "recall", "accuracy", "delta")),
                      _gates(j.summary), j.run_id)
    if not console.is_terminal:  # piped or a CI log: natural width, nothing folded
        from rich.measure import Measurement

        wide = PlainConsole(width=1_000_000)
        console = PlainConsole(width=max(40, Measurement.get(wide, wide.options, table).maximum),
                          soft_wrap=True)
    console.print(table)
