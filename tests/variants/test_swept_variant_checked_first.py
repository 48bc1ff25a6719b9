"""A multirun over ``variant=a,b,c`` checks every swept name before the first job pays: a
typo in the last value used to be found only at its own job, after the earlier jobs ran."""
from __future__ import annotations

from pathlib import Path


def test_a_swept_variant_typo_stops_the_sweep_before_any_call(skilleval_cli, tmp_path: Path) -> None:
    variants = tmp_path / "variants.yaml"
    variants.write_text('strong: "Write CHANGELOG.md entries and release notes from merged pull '
                        'requests. Use when asked what changed since a tag."\n')
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", f"variants={variants}",
                          "variant=strong,stronk", "progress=false", "trigger.runs=1", check=2)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    # each job fails with the same line: printed once, then counted
    assert len(lines) == 2 and "variant=stronk" in lines[0], lines
    assert lines[1] == "skilleval: the error above occurred in both jobs (printed once)"
    assert not (skilleval_cli.store / "trials").exists()  # nothing ran, nothing was paid


def test_a_valid_sweep_still_runs_every_job(skilleval_cli, tmp_path: Path) -> None:
    variants = tmp_path / "variants.yaml"
    variants.write_text('strong: "Write CHANGELOG.md entries and release notes from merged pull '
                        'requests. Use when asked what changed since a tag."\n')
    skilleval_cli.run("-m", "+experiment=trigger_eval", f"variants={variants}",
                      "variant=strong,original", "progress=false", "trigger.runs=1", check=0)
    assert len(list(skilleval_cli.outputs.rglob("results.json"))) == 2
