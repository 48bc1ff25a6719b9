"""skilleval composes the config once per start (skilleval/hydra_mode.py): Hydra's own mode
check runs only when the command line could set hydra.mode. Both paths must keep Hydra's
meaning of the command line."""
from __future__ import annotations

import json

from skilleval.hydra_mode import mode_is_from_flags


def test_only_a_command_line_that_cannot_set_the_mode_skips_the_check() -> None:
    assert mode_is_from_flags(["+experiment=trigger_eval", "trigger.runs=1", "-m"])
    assert not mode_is_from_flags(["+experiment=trigger_eval", "hydra.mode=MULTIRUN"])
    assert not mode_is_from_flags(["--config-dir=/tmp/x", "+experiment=trigger_eval"])
    assert not mode_is_from_flags(["-cn", "other"])


def _jobs(cli) -> int:  # noqa: ANN001
    out = cli.run("sql", "select count(*) as n from runs", "--format", "json", check=0)
    return json.loads(out.stdout)[0]["n"]


def test_hydra_mode_multirun_on_the_command_line_still_sweeps(skilleval_cli) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false",
                      "hydra.mode=MULTIRUN", "trigger.threshold=0.3,0.7", check=0)
    assert _jobs(skilleval_cli) == 2


def test_dash_m_sweeps_and_a_plain_run_is_one_job(skilleval_cli) -> None:  # noqa: ANN001
    skilleval_cli.run("-m", "+experiment=trigger_eval", "trigger.runs=1", "progress=false",
                      "trigger.threshold=0.3,0.7", check=0)
    assert _jobs(skilleval_cli) == 2
    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false", check=0)
    assert _jobs(skilleval_cli) == 3
