"""Audit: feedback stays with the outputs it was given on.

`functional.iteration=N` naming an iteration that already holds outputs and a person's
feedback.json rewrote the outputs in place and left feedback.json: the viewer then showed
the old feedback under the new outputs."""
from __future__ import annotations

import json
from pathlib import Path


def test_rewriting_an_iteration_sets_its_feedback_aside(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    ws = tmp_path / "ws"
    args = ("+experiment=functional_eval", "functional.runs=1", "functional.only=[1]", "functional.analyze=false",
            f"functional.workspace={ws}", "functional.iteration=1", "progress=false")
    skilleval_cli.run(*args, check=0, timeout=300)
    fb = ws / "iteration-1" / "feedback.json"
    given = {"reviews": [{"run_id": "x", "feedback": "the header row is duplicated", "timestamp": "t"}],
             "status": "in_progress"}
    fb.write_text(json.dumps(given))
    p = skilleval_cli.run(*args, "functional.bootstrap=101", check=0, timeout=300)
    assert not fb.exists()
    [kept] = list((ws / "iteration-1").glob("feedback.before-*.json"))
    assert json.loads(kept.read_text()) == given
    assert kept.name in p.stdout + p.stderr
