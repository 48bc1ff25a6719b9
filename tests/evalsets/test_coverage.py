"""Clauses from the description and the body's scope statements, mapped to queries; the
offline drafter stays away from the simulator; bundled examples are never written to."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from skilleval.evalsets.coverage import coverage
from skilleval.evalsets.text import scope_clauses
from skilleval.skills import load_skill

REPO = Path(__file__).resolve().parents[2]


def test_clauses_of_description_and_scope_sections() -> None:
    csv = {(c.polarity, c.text) for c in scope_clauses(load_skill(REPO / "experiments/csv-tidy"))}
    assert ("use", "dedupe rows") in csv and ("use", "trim stray whitespace") in csv
    assert ("not", "SQL queries against a database") in csv and ("not", "pivot tables") in csv
    log = [c for c in scope_clauses(load_skill(REPO / "experiments/changelog-writer")) if c.polarity == "use"]
    # the body's "## When this applies" bullets count, one clause each
    assert any(c.text.startswith("Deciding whether the next release is a major") for c in log)


def test_coverage_maps_clauses_to_queries_by_polarity() -> None:
    skill = load_skill(REPO / "experiments/csv-tidy")
    rows = [{"id": "a", "query": "dedupe the rows of contacts.csv on email", "should_trigger": True},
            {"id": "b", "query": "make a pivot table of revenue in sales.xlsx", "should_trigger": False},
            {"id": "c", "query": "write SQL queries against a database for the report", "should_trigger": True}]
    cov = {(c.clause.polarity, c.clause.text): c.queries for c in coverage(skill, rows)}
    assert cov[("use", "dedupe rows")] == ["a"]
    assert cov[("not", "pivot tables")] == ["b"]
    assert cov[("not", "SQL queries against a database")] == []  # a should-trigger query does not cover it
    assert cov[("use", "trim stray whitespace")] == []


def test_offline_drafter_does_not_import_the_simulator() -> None:
    code = ("import sys, skilleval.evalsets.offline, skilleval.evalsets.draft, skilleval.evalsets.coverage; "
            "print([m for m in sys.modules if m.startswith('skilleval.sim')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_bundled_example_is_drafted_into_the_run_folder(skilleval_cli) -> None:  # noqa: ANN001
    evals = REPO / "experiments/changelog-writer/evals"
    before = sorted(p.name for p in evals.iterdir())
    skilleval_cli.run("+experiment=draft_evals", "draft.n=6", "progress=false", check=0)
    assert sorted(p.name for p in evals.iterdir()) == before
    drafts = list(skilleval_cli.outputs.rglob("trigger_eval.draft.json"))
    assert len(drafts) == 1 and len(json.loads(drafts[0].read_text())) == 6


def test_a_use_then_not_sentence_splits_into_both_polarities() -> None:
    from skilleval.domain import Skill

    skill = Skill("log-digest", "Summarise logs. Use for server logs and stack traces, but not for "
                  "application metrics or dashboards.", "", Path("."), {})
    got = [(c.polarity, c.text) for c in scope_clauses(skill)]
    assert got == [("use", "Summarise logs"), ("use", "server logs and stack traces"),
                   ("not", "application metrics or dashboards")]
    slides = load_skill(REPO / "experiments/distractors/release-notes-slides")
    assert ("not", "a text changelog file") in [(c.polarity, c.text) for c in scope_clauses(slides)]


def test_a_query_inside_a_clause_does_not_cover_it() -> None:
    """partial_ratio slides the shorter text along the longer: the query "x" (inside "next")
    covered the changelog's "Deciding whether the next release is a major, minor or patch
    bump", and "sum" covered "Summarising what changed"; a clause typed with a typo still does."""
    skill = load_skill(REPO / "experiments/changelog-writer")
    rows = [{"id": "x", "query": "x", "should_trigger": True},
            {"id": "sum", "query": "sum", "should_trigger": True},
            {"id": "typo", "query": "help me with decidng whether the next release is a major, minor "
                                    "or patch bump", "should_trigger": True}]
    covered = {q for c in coverage(skill, rows) for q in c.queries}
    assert "x" not in covered and "sum" not in covered
    assert "typo" in covered
