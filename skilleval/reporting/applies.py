"""Refuse, before any call, a reporter selected where it would write nothing.

`reporter=[console,json,junit]` on trigger_opt used to run, exit 0 and leave no junit.xml:
trigger_opt writes its own results.json and console summary and hands no report to the
reporters. A reporter may declare ``kinds`` (the report kinds it writes) and an experiment
``reports`` (the kinds it hands to ``job.report``); where both are declared and share nothing
(``gates`` counts when a gate is set), the run is bad input: exit 2 with one line.
"""
from __future__ import annotations

from typing import Any

from skilleval.errors import UserError


def check_reporters(selected: dict[str, Any], experiment: Any, name: str, gates_active: bool) -> None:
    """`selected` maps each chosen reporter's config name to its built instance."""
    reports = getattr(experiment, "reports", None)
    if reports is None:  # an experiment that does not say what it reports is not checked
        return
    offered = set(reports) | ({"gates"} if gates_active else set())
    idle = [key for key, reporter in selected.items()
            if getattr(reporter, "kinds", None) is not None and not offered & set(reporter.kinds)]
    if idle:
        writes = sorted({k for key in idle for k in selected[key].kinds} - {"gates"})
        # a gate only helps when every idle reporter writes gate results
        gated = " or set a gate.* (the file then holds the gate results)" \
            if getattr(experiment, "gate_metrics", ()) and all(
                "gates" in selected[key].kinds for key in idle) else ""
        raise UserError(f"reporter={','.join(idle)} would write nothing for experiment {name} "
                        f"(it writes {' and '.join(writes)} runs; {name} writes its own results "
                        f"and summary): drop {'them' if len(idle) > 1 else 'it'}{gated}")
