"""README's `skilleval diff latest~1 latest` right after a functional_eval: latest~N counts
runs of the newest run's experiment, so it found one run and stopped there. The refusal now
says so and names the experiments `--experiment` could count instead."""
from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_diff_latest_refusal_points_to_other_experiments(skilleval_cli) -> None:  # noqa: ANN001
    cli = skilleval_cli
    shutil.copytree(REPO / "experiments" / "csv-tidy", cli.cwd / "csv-tidy")
    for threshold in ("0.3", "0.7"):
        cli.run("+experiment=trigger_eval", "skill=csv-tidy", "trigger.runs=1",
                f"trigger.threshold={threshold}", check=0)
    cli.run("+experiment=functional_eval", "skill=csv-tidy", "functional.runs=1",
            "functional.only=[dedupe-contacts]", timeout=300, check=0)
    # a newer run with nothing to compare (attribute) does not choose what latest~N counts
    cli.run("+experiment=attribute", "skill=csv-tidy", "trigger.runs=1", check=0)
    r = cli.run("diff", "latest~1", "latest", check=2)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "functional_eval" in lines[0] and "--experiment" in lines[0], lines[0]
    assert "trigger_eval (2)" in lines[0], lines[0]
    cli.run("diff", "latest~1", "latest", "--experiment", "trigger_eval", check=0)
    # an unknown run id is not a counting problem: no hint about --experiment
    [line] = cli.run("diff", "nope", "latest", check=2).stderr.strip().splitlines()
    assert "no run 'nope'" in line and "--experiment" not in line, line
