"""Issue 8 item 5: `anthropic_api` against serve-sim and the `stub` backend draw the same
outcome for every trial, on an unseen skill, through the whole app (self-check on, 529s
retried). The skill's description is written the way users write YAML: a literal block with a
blank line, a bullet line and a long run of spaces."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skilleval.sim.process import SimProcess
from skilleval.store.catalog import Store

SKILL_MD = """---
name: team-digest
description: |
  Write internal team digests: weekly status reports, leadership updates and
  3P updates (progress, plans, problems) for the team.

  - note: use for internal-facing newsletters and incident summaries;    not for
  press releases or customer emails.
license: internal
---

# Team digest

Use the template in templates/digest.md.
"""

QUERIES = [
    ("draft the weekly 3P update for the platform team", True),
    ("write a leadership update about the migration slipping", True),
    ("put together this month's team newsletter", True),
    ("incident summary for yesterday's outage, internal audience", True),
    ("status report on the warehouse project for my director", True),
    ("summarise what my team shipped this sprint as a digest", True),
    ("write a press release announcing our funding", False),
    ("email a customer apologising for the late shipment", False),
    ("fix the off-by-one bug in pagination.py", False),
    ("translate this paragraph into German", False),
]


def _run(tmp: Path, name: str, *args: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    env = {**os.environ, "SKILLEVAL_STORE": str(tmp / name), "SKILLEVAL_OUTPUTS": str(tmp / f"out-{name}"),
           "ANTHROPIC_API_KEY": "sk-ant-test"}
    proc = subprocess.run([sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval",
                           "progress=false", f"skill={tmp / 'team-digest'}", "backend.model=sim-1",
                           "trigger.policy=fixed", *args],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = Store(tmp / name).query("select query, repeat, outcome, fired from trials "
                                   "order by query, repeat").to_pylist()
    return proc, rows


def _write_skill(tmp: Path) -> None:
    skill = tmp / "team-digest"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "evals" / "trigger_eval.json").write_text(
        json.dumps([{"query": q, "should_trigger": s} for q, s in QUERIES]))


@pytest.fixture(scope="module")
def stub_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """The skill folder and the stub's trials over 3 runs, made once: each real backend's test
    runs the same skill folder into its own store and compares with these trials (the CLI test
    with its 2 runs: repeats 0 and 1; the stub draws per trial key, so they are the same)."""
    tmp = tmp_path_factory.mktemp("agreement")
    _write_skill(tmp)
    _, stub = _run(tmp, "stub", "backend=stub", "trigger.runs=3")
    return tmp, stub


def test_api_against_serve_sim_equals_stub_trial_by_trial(stub_run, sim: SimProcess) -> None:  # noqa: ANN001
    tmp, stub = stub_run
    sim.configure(fail_next=[529, 529, 529], retry_after_s=0.01)
    _, api = _run(tmp, "api", "backend=anthropic_api", f"backend.base_url={sim.url}",
                  "backend.retry_base_s=0.01", "backend.retry_max_s=0.05", "trigger.runs=3")
    assert len(stub) == len(api) == 3 * len(QUERIES)
    assert api == stub
    assert any(r["outcome"] == "triggered" for r in stub) and any(
        r["outcome"] == "not_triggered" for r in stub)
    # what the simulator parsed out of the request is the whole description, every time
    shown = {d for e in sim.log() for d in e["descriptions"]}
    assert len(shown) == 1 and "press releases or customer emails." in shown.pop()


def test_real_cli_against_serve_sim_equals_stub_trial_by_trial(stub_run, sim: SimProcess,  # noqa: ANN001
                                                               claude_bin: str) -> None:
    tmp, stub = stub_run  # 10 queries x 2 runs: 20 real CLI processes (+ 6 self-check)
    _, cli = _run(tmp, "cli", "backend=claude_cli", f"backend.executable={claude_bin}",
                  f"backend.base_url={sim.url}", "trigger.runs=2")
    assert len(cli) == 20 and cli == [r for r in stub if r["repeat"] < 2]
