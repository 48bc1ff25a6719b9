"""A job's row in the ``runs`` table: written when it starts ("running") and when it ends."""
from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from omegaconf import OmegaConf

if TYPE_CHECKING:
    from skilleval.app import JobContext


def _spent(job: "JobContext", status: str) -> dict[str, Any]:
    """The row's calls and cost. A run that finished booked its totals in the summary. One
    stopped before that (Ctrl-C, an error) still paid for every call its runners and the
    budget saw: the self-check's early booking alone (6 calls) used to stand for a run
    interrupted after 40 paid trials."""
    s = job.summary
    live = {"calls_made": max([sum(r.calls_made for r in job.runners), job.budget.calls if job.budget else 0]),
            "calls_cached": sum(r.calls_cached for r in job.runners),
            "cost_usd": max([sum(r.cost_usd for r in job.runners), job.budget.usd if job.budget else 0.0])}
    if status in ("done", "gate_failed", "gate_unchecked", "budget_stopped"):
        return {k: s.get(k, v) for k, v in live.items()}
    return {k: max(s.get(k, v), v) for k, v in live.items()}


def write_run_row(job: "JobContext", writer: Any, status: str) -> None:
    from skilleval.registry import default_registry

    versions = {r.distribution: r.version for r in default_registry().all()}
    writer.write([{
        **job.identity_row(), "ts": dt.datetime.now(dt.timezone.utc), "status": status,
        "backend": job.backend.name, "model": job.backend.model, "skill": str(job.cfg.get("skill")),
        "output_dir": str(job.output_dir), "overrides": job.overrides,
        "config_yaml": OmegaConf.to_yaml(job.cfg, resolve=False),
        "plugin_versions": json.dumps(versions, sort_keys=True),
        **_spent(job, status),
        "summary_json": json.dumps(job.summary, default=str),
        "variant": job.variant.name if job.variant is not None else "",
        "description_hash": job.description_hash,
    }])
    writer.flush()
