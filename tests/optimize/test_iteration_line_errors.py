"""trigger_opt's iteration lines count a query without a verdict (errors, timeouts) as
neither a pass nor a fail: "train 7/10" read as three failures where results.json said
7/9 with one insufficient."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from skilleval.optimize.selection import QueryOutcome, rank_key

REPO = Path(__file__).resolve().parents[2]


def test_iteration_lines_agree_with_results_json_under_errors(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    skill = tmp_path / "changelog-writer"
    shutil.copytree(REPO / "experiments" / "changelog-writer", skill)
    r = skilleval_cli.run("+experiment=trigger_opt", f"skill={skill}", "backend.error_rate=0.2",
                          "backend.timeout_rate=0.1", "optimize.max_iterations=1", "progress=false",
                          check=0, timeout=300)
    [res] = skilleval_cli.results()
    history = json.loads(res.read_text())["history"]
    lines = {(int(m[1]), int(m[2])): m[3] for m in re.finditer(r"it (\d+) c(\d+): train (.*?) val", r.stdout + r.stderr)}
    assert any(h["train_insufficient"] for h in history), "the faults must leave a query insufficient"
    for h in history:
        want = f"{h['train_passed']}/{h['train_total']}"  # train_total: queries with a verdict
        if h["train_insufficient"]:
            want += f" ({h['train_insufficient']} insufficient)"
        assert lines[(h["iteration"], h["candidate"])] == want, (h["iteration"], lines)
    # the run's errors and timeouts are counted and shown (they were only per query)
    doc = json.loads(res.read_text())
    rows = json.loads(skilleval_cli.run("sql", "select outcome, count(*) as n from trials_all group by 1",
                                        "--format", "json", check=0).stdout)
    counts = {r["outcome"]: r["n"] for r in rows}
    assert (doc["trial_errors"], doc["trial_timeouts"]) == (counts.get("error", 0), counts.get("timeout", 0))
    assert doc["trial_errors"] > 0
    assert (f"{doc['trial_errors']} trial(s) errored and {doc['trial_timeouts']} timed out"
            in " ".join(r.stdout.split())), r.stdout


def test_an_insufficient_query_does_not_rank_a_description_lower() -> None:
    """Two descriptions that pass every query with a verdict: one lost a query to errors."""
    def q(i: int, ok: bool, insufficient: bool = False) -> QueryOutcome:
        return QueryOutcome(f"q{i}", True, 3 if ok else 0, 0 if insufficient else 3, ok and not insufficient,
                            insufficient)
    clean = [q(i, True) for i in range(4)]
    errored = [q(0, False, insufficient=True)] + [q(i, True) for i in range(1, 4)]
    failed = [q(0, False)] + [q(i, True) for i in range(1, 4)]
    assert rank_key(clean, errored, "b") <= rank_key(clean, clean, "bb")  # equal shares: shorter wins
    assert rank_key(clean, errored, "b") < rank_key(clean, failed, "b")
