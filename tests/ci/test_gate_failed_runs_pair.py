"""README's CI loop, walked as a newcomer: a run whose gate failed is a finished measurement.

`diff latest~1 latest` after a red check, and `gate.baseline=latest` on the next run, must pair
with it; both used to skip it (only status 'done' counted) and reached back to an older run,
here one over a different eval set, where the gate then exited 2 ("the runs share no query")
after every call had been paid for, without naming the baseline."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN = ("+experiment=trigger_eval", "skill=csv-tidy", "trigger.runs=1")


def _run_ids(cli) -> list[str]:  # noqa: ANN001
    out = cli.run("sql", "select run_id, status from runs order by ts", "--format", "json", check=0)
    return [(r["run_id"], r["status"]) for r in json.loads(out.stdout)]


def test_the_run_after_a_failed_gate_pairs_with_it(skilleval_cli) -> None:  # noqa: ANN001
    cli = skilleval_cli
    shutil.copytree(REPO / "experiments" / "csv-tidy", cli.cwd / "csv-tidy")
    other = cli.cwd / "other.json"  # an older run over queries the skill's own set lacks
    other.write_text(json.dumps([{"query": "dedupe people.csv by email", "should_trigger": True},
                                 {"query": "what is the capital of France?", "should_trigger": False}]))
    cli.run(*RUN, f"cases={other}", check=0)
    cli.run(*RUN, "gate.min_accuracy=0.99", check=1)
    failed = [rid for rid, status in _run_ids(cli) if status == "gate_failed"]
    assert len(failed) == 1

    r = cli.run(*RUN, "gate.baseline=latest", "gate.max_regression=0.05")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"baseline {failed[0]}" in r.stdout + r.stderr

    r = cli.run("diff", "latest~1", "latest", "--format", "json", check=0)
    assert json.loads(r.stdout)["a"]["run_id"] == failed[0]


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
