"""The `llm` proposer takes a description only from a ``<new_description>`` block. A reply
without one (a refusal, a preamble) used to become a candidate as a whole, skill-creator's
bug B10: "I would rather not rewrite that." was evaluated on train and validation, paid for."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skilleval.sim.process import SimProcess

REPO = Path(__file__).resolve().parents[2]
HOOKS = REPO / "tests" / "fixtures" / "sim_hooks"
REFUSAL = "I would rather not rewrite that."


@pytest.fixture(scope="module")
def refusing_sim():  # noqa: ANN201
    """serve-sim whose model refuses every request to improve a description (a --hook)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", str(HOOKS))
        with SimProcess(hook="refusing_proposer_hook", retry_after_s=0.01) as sim:
            yield sim


def run_opt(cli, tmp_path: Path, sim):  # noqa: ANN001, ANN201
    skill = tmp_path / "changelog-writer"
    shutil.copytree(REPO / "experiments" / "changelog-writer", skill)
    r = cli.run("+experiment=trigger_opt", f"skill={skill}", "backend=anthropic_api",
                f"backend.base_url={sim.url}", "backend.model=sim-1", "trigger.runs=1",
                "trigger.self_check=false", "optimize.apply=true")
    return r, skill


def test_a_reply_without_the_tags_is_never_a_candidate(skilleval_cli, tmp_path: Path,
                                                       refusing_sim) -> None:  # noqa: ANN001
    r, _ = run_opt(skilleval_cli, tmp_path, refusing_sim)
    assert "Traceback" not in r.stderr
    doc = json.loads(skilleval_cli.results()[-1].read_text())
    assert [h["description"] for h in doc["history"] if REFUSAL in h["description"]] == []
    assert "no <new_description></new_description> block" in r.stderr


def test_a_proposer_that_never_gives_a_candidate_is_exit_3_and_said(skilleval_cli, tmp_path: Path,
                                                                      refusing_sim) -> None:  # noqa: ANN001
    """No candidate was evaluated: the summary used to say "No candidate beat the original in a
    paired comparison" (none was made), record that as the recommendation's reason, exit 0."""
    r, skill = run_opt(skilleval_cli, tmp_path, refusing_sim)
    assert r.returncode == 3, r.stdout + r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("skilleval:")]
    assert len(errors) == 1 and "before any candidate was evaluated" in errors[0], r.stderr
    assert "No candidate was evaluated (proposer_failed" in r.stdout
    assert "paired comparison" not in r.stdout
    doc = json.loads(skilleval_cli.results()[-1].read_text())
    assert doc["recommended"]["which"] == "original"
    assert doc["recommended"]["reason"].startswith("no candidate was evaluated (proposer_failed")
    assert "description: Helps with project documentation tasks." in (skill / "SKILL.md").read_text()
