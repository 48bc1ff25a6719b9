"""Issue 8 item 7: a rerun of a finished paid run sends nothing, self-check included
(anthropic_api against a real serve-sim, counting the requests it receives)."""
from __future__ import annotations

import pytest

from skilleval.sim.process import SimProcess
from trust_helpers import EXAMPLES


def _requests(sim: SimProcess) -> int:
    return sim.stats().get("POST /v1/messages", 0)


@pytest.mark.parametrize("experiment", [
    ("+experiment=trigger_eval", f"skill={EXAMPLES / 'csv-tidy'}"),
    ("+experiment=trigger_opt", "proposer=stub", "optimize.max_iterations=1"),
])
def test_rerun_of_a_finished_api_run_sends_nothing(skilleval_cli, sim: SimProcess,  # noqa: ANN001
                                                   experiment: tuple[str, ...]) -> None:
    args = (*experiment, "progress=false", "backend=anthropic_api", f"backend.base_url={sim.url}",
            "backend.model=sim-1", "trigger.runs=1")
    env = {"ANTHROPIC_API_KEY": "sk-ant-test"}
    first = skilleval_cli.run(*args, env=env, check=0)
    sent = _requests(sim)
    assert sent > 6, "the first run pays for its trials and its self-check"
    assert "from the store" not in first.stderr
    assert "self-check" in first.stderr
    again = skilleval_cli.run(*args, env=env, check=0)
    assert _requests(sim) == sent, f"the rerun sent {_requests(sim) - sent} requests"
    assert "self-check" in again.stderr and "from the store" in again.stderr
