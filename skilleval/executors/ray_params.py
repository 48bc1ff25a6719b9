"""Parameters of the `ray` executor (importable without Ray installed, for `--help`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass
class RayParams:
    # Cluster to join: null = $RAY_ADDRESS if set, else a local Ray started by this job.
    address: Optional[str] = None
    # A local Ray's CPU count (null: all of this machine's); ignored when joining a cluster.
    num_cpus: Optional[int] = None
    # CPUs one trial occupies: Ray then runs at most CPUs ÷ this trials at once per node.
    cpus_per_trial: float = 1.0
    # Times Ray re-runs a trial whose worker or node died (elsewhere if the node is gone).
    max_retries: int = 3
