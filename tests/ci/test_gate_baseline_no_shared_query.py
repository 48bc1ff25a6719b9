"""README's CI loop, walked as a newcomer: `gate.baseline=latest` reached back past a run whose
gate failed to an older run over a different eval set, and the gate then exited 2 ("the runs
share no query") after every call had been paid for, without naming the baseline. Nothing to
compare is "could not measure": exit 3, one line naming the baseline."""
from __future__ import annotations

import json
from pathlib import Path

def _run_ids(cli) -> list[str]:  # noqa: ANN001
    out = cli.run("sql", "select run_id, status from runs order by ts", "--format", "json", check=0)
    return [(r["run_id"], r["status"]) for r in json.loads(out.stdout)]


def test_baseline_sharing_no_query_is_could_not_measure(make_skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Found after the calls, so not exit 2: exit 3 with one line naming the baseline."""
    cli = make_skilleval_cli(tmp_path)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps([{"query": "update CHANGELOG.md", "should_trigger": True},
                             {"query": "what is 2 + 2?", "should_trigger": False}]))
    b.write_text(json.dumps([{"query": "write release notes for v2", "should_trigger": True},
                             {"query": "what is the capital of Peru?", "should_trigger": False}]))
    cli.run("+experiment=trigger_eval", "trigger.runs=1", f"cases={a}", check=0)
    base = _run_ids(cli)[0][0]
    r = cli.run("+experiment=trigger_eval", "trigger.runs=1", f"cases={b}", "gate.baseline=latest",
                "gate.max_regression=0.05")
    assert r.returncode == 3, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "gate.baseline" in ln]
    assert len(lines) == 1 and base in lines[0] and "share no query" in lines[0], r.stderr


def test_latest_baseline_is_the_newest_run_like_this_one(make_skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """`gate.baseline=latest` took whatever ran last: a run on another model (a stub run gated a
    claude_cli one), or one over 1 of this run's 4 queries (the gate then compared that one
    query and passed). Now: the same backend and model, and the newest run with exactly
    these queries when there is one."""
    cli = make_skilleval_cli(tmp_path)
    full, sub = tmp_path / "full.json", tmp_path / "sub.json"
    cases = [{"query": "update CHANGELOG.md for the release", "should_trigger": True},
             {"query": "write release notes for v2", "should_trigger": True},
             {"query": "what is 2 + 2?", "should_trigger": False},
             {"query": "what is the capital of Peru?", "should_trigger": False}]
    full.write_text(json.dumps(cases))
    sub.write_text(json.dumps(cases[:1]))
    cli.run("+experiment=trigger_eval", "trigger.runs=1", f"cases={full}", "backend.model=sim-1", check=0)
    wanted = _run_ids(cli)[-1][0]
    cli.run("+experiment=trigger_eval", "trigger.runs=1", f"cases={sub}", "backend.model=sim-1", check=0)
    cli.run("+experiment=trigger_eval", "trigger.runs=1", f"cases={full}", "backend.model=sim-2", check=0)
    r = cli.run("+experiment=trigger_eval", "trigger.runs=1", f"cases={full}", "backend.model=sim-1",
                "gate.baseline=latest", "gate.max_regression=0.05")
    assert r.returncode == 0, r.stdout + r.stderr
    [line] = [ln for ln in r.stdout.splitlines() if "change vs baseline" in ln]
    assert f"baseline {wanted}" in line, (wanted, line)
    # nothing earlier on this model: not checked, and the line says on what
    r = cli.run("+experiment=trigger_eval", "trigger.runs=1", f"cases={full}", "backend.model=sim-3",
                "gate.baseline=latest", "gate.max_regression=0.05")
    assert "not checked" in r.stdout + r.stderr and "on stub/sim-3" in r.stdout + r.stderr, r.stdout + r.stderr
