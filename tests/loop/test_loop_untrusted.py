"""Audit: a trigger run that exits 3 (too many trials errored) says so in every file it
writes. results.json, junit.xml and summary.md (the PR comment) showed its metrics as a
measurement; only the exit code and one stderr line said it was not trustworthy."""
from __future__ import annotations

import json

from junitparser import JUnitXml


def test_an_untrustworthy_run_says_so_in_its_files(skilleval_cli) -> None:  # noqa: ANN001
    p = skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=2", "backend.error_rate=0.7",
                          "progress=false", "reporter=[json,junit,markdown]", check=3)
    [line] = [ln for ln in p.stderr.splitlines() if ln.startswith("skilleval: error:")]
    why = line.removeprefix("skilleval: error: ")
    assert "not trustworthy" in why
    [res] = skilleval_cli.results()
    assert json.loads(res.read_text())["could_not_measure"] == why
    [junit] = list(skilleval_cli.outputs.rglob("junit.xml"))
    props = {pr.name: pr.value for pr in next(iter(JUnitXml.fromfile(str(junit)))).properties()}
    assert props["could_not_measure"] == why
    md = next(skilleval_cli.outputs.rglob("summary.md")).read_text(encoding="utf-8")
    assert "**Could not measure (exit 3):" in md
    run = json.loads(skilleval_cli.run("sql", "select status, summary_json from runs", "--format", "json",
                                       check=0).stdout)[-1]
    assert run["status"] == "harness_error"
    assert json.loads(run["summary_json"])["could_not_measure"] == why


def test_a_functional_run_that_measured_nothing_says_so_in_junit_and_markdown(skilleval_cli) -> None:  # noqa: ANN001
    """The same for functional_eval's exit 3 (no arm wrote any output file): benchmark.json
    flagged it, but junit.xml and summary.md showed the delta as a measurement."""
    from pathlib import Path

    from skilleval.sim.process import SimProcess

    changelog = Path(__file__).resolve().parents[2] / "experiments" / "changelog-writer"
    with SimProcess() as sim:
        p = skilleval_cli.run("+experiment=functional_eval", f"skill={changelog}", "functional.runs=1",
                              "functional.only=[1]", "functional.analyze=false", "functional.bootstrap=100",
                              "backend=anthropic_api", f"backend.base_url={sim.url}", "progress=false",
                              "reporter=[console,junit,markdown]", check=3, timeout=300)
    assert "no arm wrote any output file" in p.stderr
    [junit] = list(skilleval_cli.outputs.rglob("junit.xml"))
    props = {pr.name: pr.value for pr in next(iter(JUnitXml.fromfile(str(junit)))).properties()}
    assert "no arm wrote any output file" in props["could_not_measure"]
    md = next(skilleval_cli.outputs.rglob("summary.md")).read_text(encoding="utf-8")
    assert "**Could not measure (exit 3): " in md and "no arm wrote any output file" in md
