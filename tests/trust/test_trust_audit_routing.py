"""Audit of the routing figures: recomputed by hand from the store's trial rows.

Every routing number (matrix, per-skill precision and recall, accuracy, the per-query rows of
the ``queries`` table) must follow from the ``trials`` rows alone, errors counted in their own
column and left out of every denominator.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from routing_by_hand import clustered_by_hand as _by_hand

REPO = Path(__file__).resolve().parents[2]
EX = REPO / "experiments"
SKILLS = [EX / "changelog-writer", EX / "csv-tidy", EX / "distractors" / "xlsx-editor",
          EX / "distractors" / "pdf-form-filler"]
NAMES = ["changelog-writer", "csv-tidy", "xlsx-editor", "pdf-form-filler"]
CASES = EX / "routing" / "cases.json"
VALID = ("triggered", "not_triggered")
MIN_VALID = 3  # with errors injected, some queries have fewer valid runs: "insufficient"


def _skills_arg() -> str:
    return "skills=[" + ",".join(str(p) for p in SKILLS) + "]"


@pytest.fixture(scope="module")
def routed(make_skilleval_cli, tmp_path_factory):  # noqa: ANN001, ANN201
    """One small routing run with injected errors (no retries), and its store rows."""
    cli = make_skilleval_cli(tmp_path_factory.mktemp("routing"))
    cli.run("+experiment=routing", _skills_arg(), f"cases={CASES}", "progress=false",
            "trigger.runs=3", "trigger.catalog=2", "backend.error_rate=0.25",
            f"trigger.min_valid={MIN_VALID}",
            "backend.max_retries=0", "trigger.max_error_rate=1", check=0)
    [path] = list(cli.outputs.rglob("results.json"))
    res = json.loads(path.read_text())
    trials = json.loads(cli.run("sql", "select case_id, query, outcome, fired from trials",
                                "--format", "json", check=0).stdout)
    rows = json.loads(cli.run("sql", "select * from queries", "--format", "json", check=0).stdout)
    return res, trials, rows


def _expected() -> dict[str, str | None]:
    return {c["query"]: c["expected_skill"] for c in json.loads(CASES.read_text())}


def test_every_routing_figure_matches_a_hand_count(routed) -> None:  # noqa: ANN001
    res, trials, _ = routed
    exp = _expected()
    assert any(t["outcome"] not in VALID for t in trials), "the run should contain errors"
    cell: Counter[tuple[str, str]] = Counter()
    for t in trials:
        row = exp[t["query"]] or "none"
        if t["outcome"] not in VALID:
            col = "error"
        elif t["fired"] is None:
            col = "none"
        else:
            col = t["fired"] if t["fired"] in NAMES else "other"
        cell[(row, col)] += 1
    for row, cols in res["matrix"].items():
        for col, n in cols.items():
            assert n == cell[(row, col)], (row, col)
    assert res["errors"] == sum(n for (_, c), n in cell.items() if c == "error")
    for s in NAMES:
        tp = cell[(s, s)]
        rec_n = sum(n for (r, c), n in cell.items() if r == s and c != "error")
        prec_n = sum(n for (_, c), n in cell.items() if c == s)
        rec, prec = res["per_skill"][s]["recall"], res["per_skill"][s]["precision"]
        assert (rec["k"], rec["n"]) == (tp, rec_n)
        assert (prec["k"], prec["n"]) == (tp, prec_n)
        if rec_n:  # the interval is over queries: recomputed by hand from the trial rows
            per_query = [(sum(t["fired"] == s for t in trials if t["query"] == q and t["outcome"] in VALID),
                          sum(t["query"] == q and t["outcome"] in VALID for t in trials))
                         for q, e in exp.items() if e == s]
            assert (rec["low"], rec["high"]) == pytest.approx(_by_hand(per_query))
    correct = sum(n for (r, c), n in cell.items() if r == c)
    valid = sum(n for (_, c), n in cell.items() if c != "error")
    assert (res["accuracy"]["k"], res["accuracy"]["n"]) == (correct, valid)


def test_query_rows_read_like_trigger_rows(routed) -> None:  # noqa: ANN001
    """A ``queries`` row of a routing run keeps the table's meaning: ``triggers`` /
    ``trigger_rate`` count how often the query *fired* what it should (its expected skill) or,
    for a "none" query, fired anything; ``passed`` follows from them by the trigger rule
    (rate >= threshold when it should fire, rate < threshold when not), so `diff`, the viewer
    and SQL read a routing run as they read any trigger run."""
    _, trials, rows = routed
    exp = _expected()
    for r in rows:
        mine = [t for t in trials if t["query"] == r["query"]]
        valid = [t for t in mine if t["outcome"] in VALID]
        want = exp[r["query"]]
        fired = [t for t in valid if (t["fired"] == want if want else t["fired"] is not None)]
        assert r["should_trigger"] == (want is not None)
        assert r["valid_runs"] == len(valid) and r["runs"] == len(mine)
        assert r["errors"] + r["timeouts"] == len(mine) - len(valid)
        assert r["triggers"] == len(fired), r["query"]
        if len(valid) >= MIN_VALID:
            rate = len(fired) / len(valid)
            assert r["trigger_rate"] == pytest.approx(rate)
            assert r["passed"] == (rate >= r["threshold"] if want else rate < r["threshold"])
            assert r["verdict"] == ("pass" if r["passed"] else "fail")
        else:
            assert r["passed"] is None and r["verdict"] == "insufficient", r


def test_duplicate_case_ids_are_bad_input(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Two cases under one id would be tallied under the second case's expected skill."""
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([
        {"id": "a", "query": "update CHANGELOG.md for the 2.4.0 release", "expected_skill": "changelog-writer"},
        {"id": "a", "query": "what is the capital of Australia?", "expected_skill": None}]))
    r = skilleval_cli.run("+experiment=routing", _skills_arg(), f"cases={cases}", "progress=false",
                          check=2)
    assert "duplicate id 'a'" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    # an explicit id equal to another entry's default id (r1) collides the same way
    cases.write_text(json.dumps([
        {"id": "r1", "query": "update CHANGELOG.md for the 2.4.0 release", "expected_skill": "changelog-writer"},
        {"query": "what is the capital of Australia?", "expected_skill": None}]))
    r = skilleval_cli.run("+experiment=routing", _skills_arg(), f"cases={cases}", "progress=false",
                          check=2)
    assert "duplicate id 'r1'" in r.stderr


def test_a_query_asked_twice_is_bad_input(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """The same query under two expected skills ran (its trials shared, counted under both):
    precision 0.50 of one skill from one query's cached trials."""
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([
        {"query": "update CHANGELOG.md for the 2.4.0 release", "expected_skill": "changelog-writer"},
        {"query": "update CHANGELOG.md for the 2.4.0 release ", "expected_skill": None}]))
    r = skilleval_cli.run("+experiment=routing", _skills_arg(), f"cases={cases}", "progress=false", check=2)
    assert "entry 1: duplicate query (same as entry 0)" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_diff_refuses_a_routing_run(skilleval_cli) -> None:  # noqa: ANN001
    """diff read a routing run as one skill's trigger run: a header naming the first skill,
    rows labelled trigger / quiet, precision of a skill the run was not about."""
    skilleval_cli.run("+experiment=routing", _skills_arg(), f"cases={CASES}", "progress=false",
                      "trigger.runs=1", check=0)
    rid = json.loads(skilleval_cli.run("sql", "select run_id from runs where experiment = 'routing'",
                                       "--format", "json", check=0).stdout)[0]["run_id"]
    r = skilleval_cli.run("diff", rid, rid, check=2)
    assert "is a routing run" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_routing_refuses_description_and_says_what_it_does_not_use(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """description= was ignored without a word (the same figures as without it); a listed
    skill whose description has '<' (which validate refuses) was measured without a warning."""
    r = skilleval_cli.run("+experiment=routing", _skills_arg(), f"cases={CASES}", "description='Totally different.'",
                          check=2)
    assert "description=" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    angled = tmp_path / "angled"
    angled.mkdir()
    (angled / "SKILL.md").write_text("---\nname: angled\ndescription: Use for <b>bold</b> requests.\n---\nbody\n")
    r = skilleval_cli.run("+experiment=routing", f"skills=[{','.join(map(str, SKILLS))},{angled}]", f"cases={CASES}",
                          "trigger.runs=1", f"skill={SKILLS[0]}", "progress=false", check=0)
    out = " ".join((r.stdout + r.stderr).split())
    assert "not used by routing" in out and "warning:" in out and "angled" in out, out
