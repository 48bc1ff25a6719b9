"""The feedback a person gave on the previous iteration, read back when the next one is made.

skill-creator's loop: outputs are reviewed in the viewer, the reviews land in the iteration's
``feedback.json``, the skill is changed, and the next iteration is run. The viewer shows the
previous iteration's feedback beside each new output; this module brings the same reviews to
the new iteration's ``benchmark.json`` / ``benchmark.md`` and to the console, so the person
deciding whether the change helped reads what they asked for next to the new numbers. Only
non-empty reviews are kept ("" means the run looked fine).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from skilleval.viewer import feedback


def previous_feedback(workspace: Path, iteration: int) -> dict[str, Any] | None:
    """``{"iteration", "status", "reviews": {run folder id: text}}`` of ``iteration-(N-1)``
    when it has a readable feedback.json with at least one non-empty review, else None."""
    prev = workspace / f"iteration-{iteration - 1}"
    if iteration < 2 or not prev.is_dir():
        return None
    data = feedback.read(prev)  # an unreadable file reads as none: the viewer says why
    reviews = {rid: text.strip() for rid, text in feedback.texts(data).items() if text.strip()}
    if not reviews:
        return None
    return {"iteration": prev.name, "status": data.get("status"), "reviews": dict(sorted(reviews.items()))}
