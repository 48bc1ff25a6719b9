"""A gate baseline that cannot be found is bad input: exit 2, one line, *before* any call.
It used to be looked up only after the whole run had been paid for (results.json written,
trials stored), and only then refused."""
from __future__ import annotations

from pathlib import Path

import pytest

RUN = ("+experiment=trigger_eval", "trigger.runs=1", "gate.max_regression=0.05")


@pytest.mark.parametrize("baseline, needle", [
    ("nosuchrun", "nosuchrun"),
    ("latest~3", "latest~3"),
    ("{tmp}/broken.json", "broken.json"),
])
def test_unknown_baseline_is_refused_before_any_call(skilleval_cli, tmp_path: Path, baseline: str,
                                                     needle: str) -> None:  # noqa: ANN001
    (tmp_path / "broken.json").write_text("{not json")
    r = skilleval_cli.run(*RUN, f"gate.baseline={baseline.format(tmp=tmp_path)}")
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert len(lines) == 1 and needle in lines[0] and "gate.baseline" in lines[0], r.stderr
    assert not (skilleval_cli.store / "trials").exists(), "calls were made before the baseline was checked"
    assert skilleval_cli.results() == []


def test_latest_baseline_on_an_empty_store_still_runs(skilleval_cli) -> None:  # noqa: ANN001
    """`latest` on a first run has nothing to compare with: the run goes ahead and says so."""
    r = skilleval_cli.run(*RUN, "gate.baseline=latest", check=0)
    assert "gate not checked: change vs baseline" in r.stdout + r.stderr
