"""Event objects handed to lifecycle hooks (one object per hook, so fields can be added)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class JobStart:
    run_id: str
    experiment: str
    config: dict[str, Any]
    output_dir: Path


@dataclass(frozen=True)
class JobEnd:
    run_id: str
    experiment: str
    status: str
    output_dir: Path
    summary: dict[str, Any] = field(default_factory=dict)
