"""Routing's intervals are over queries, not trials.

The ``trigger.runs`` trials of one query share the query, so they agree far more often than
independent draws would; a Wilson interval over trials then claims more precision than the
data hold. These tests show (1) the interval by hand on small cases, (2) by simulation, that
the trial interval under-covers on heterogeneous queries while the query interval is close
to nominal, and (3) that the CLI's printed and stored intervals are the query ones.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from routing_by_hand import clustered_by_hand

from skilleval.stats import clustered_estimate, wilson, wilson_n

REPO = Path(__file__).resolve().parents[2]
EX = REPO / "experiments"
SKILLS = [EX / "changelog-writer", EX / "csv-tidy", EX / "distractors" / "xlsx-editor",
          EX / "distractors" / "pdf-form-filler"]
CASES = EX / "routing" / "cases.json"


def test_two_queries_that_always_fire_bound_recall_like_two_draws_not_six() -> None:
    # 6/6 trials over 2 queries: the data are two agreeing queries, so the lower bound is
    # Wilson's for 2/2 (0.34), not for 6/6 (0.61).
    e = clustered_estimate([(3, 3), (3, 3)])
    assert (e["k"], e["n"], e["value"], e["n_eff"]) == (6, 6, 1.0, 2.0)
    assert e["low"] == pytest.approx(wilson(2, 2)[0]) and e["high"] == 1.0
    assert e["low"] < wilson(6, 6)[0] - 0.2


@pytest.mark.parametrize("pairs", [[(3, 3), (2, 3)], [(0, 3), (3, 3), (1, 3), (3, 3)],
                                   [(1, 2), (2, 3), (0, 3), (3, 3), (2, 2)], [(0, 3), (0, 3)]])
def test_interval_matches_the_computation_by_hand(pairs: list[tuple[int, int]]) -> None:
    e = clustered_estimate(pairs)
    assert (e["low"], e["high"]) == pytest.approx(clustered_by_hand(pairs), abs=1e-12)


def test_independent_trials_keep_the_trial_interval() -> None:
    # one trial per query: no clustering; the design effect is only the small-sample factor
    # G / (G - 1) of the variance estimated from 10 queries, so Wilson on 9 trials
    pairs = [(1, 1)] * 7 + [(0, 1)] * 3
    e = clustered_estimate(pairs)
    assert e["n_eff"] == pytest.approx(9.0)
    assert (e["low"], e["high"]) == pytest.approx(wilson_n(0.7, 9.0))
    assert e["low"] == pytest.approx(wilson(7, 10)[0], abs=0.02)


def test_coverage_by_simulation_queries_not_trials() -> None:
    """Queries with per-query fire rates drawn from Beta(1, 1) (mean 0.5), 20 queries x 5
    runs: the trial interval covers the mean well under 95 %, the query interval near it."""
    rng = random.Random(7)
    reps, hit_trials, hit_queries = 1500, 0, 0
    for _ in range(reps):
        pairs = []
        for _ in range(20):
            rate = rng.random()
            pairs.append((sum(rng.random() < rate for _ in range(5)), 5))
        k = sum(a for a, _ in pairs)
        lo, hi = wilson(k, 100)
        hit_trials += lo <= 0.5 <= hi
        e = clustered_estimate(pairs)
        hit_queries += e["low"] <= 0.5 <= e["high"]
    assert hit_trials / reps < 0.85
    assert 0.92 <= hit_queries / reps <= 0.98


def test_cli_prints_and_stores_the_query_intervals(skilleval_cli) -> None:
    skills = "skills=[" + ",".join(str(p) for p in SKILLS) + "]"
    r = skilleval_cli.run("+experiment=routing", skills, f"cases={CASES}", "progress=false",
                          "trigger.runs=3", check=0)
    assert "intervals over queries" in r.stdout
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(path.read_text())
    trials = json.loads(skilleval_cli.run("sql", "select case_id, query, outcome, fired from trials",
                                          "--format", "json", check=0).stdout)
    expected = {c["query"]: c["expected_skill"] for c in json.loads(CASES.read_text())}
    valid = [t for t in trials if t["outcome"] in ("triggered", "not_triggered")]
    for skill, v in res["per_skill"].items():
        queries = [q for q, e in expected.items() if e == skill]
        pairs = [(sum(t["fired"] == skill for t in valid if t["query"] == q),
                  sum(t["query"] == q for t in valid)) for q in queries]
        assert (v["recall"]["low"], v["recall"]["high"]) == pytest.approx(clustered_by_hand(pairs))
        fired = [(sum(t["fired"] == skill and expected[q] == skill for t in valid if t["query"] == q),
                  sum(t["fired"] == skill for t in valid if t["query"] == q)) for q in expected]
        if sum(n for _, n in fired):
            assert (v["precision"]["low"], v["precision"]["high"]) == pytest.approx(clustered_by_hand(fired))
    acc = [(sum((t["fired"] or None) == e for t in valid if t["query"] == q),
            sum(t["query"] == q for t in valid)) for q, e in expected.items()]
    assert (res["accuracy"]["low"], res["accuracy"]["high"]) == pytest.approx(clustered_by_hand(acc))


def test_trigger_eval_run_level_intervals_are_over_queries(skilleval_cli) -> None:
    """The same correlation holds for trigger_eval's run-level metrics: their intervals come
    from the per-query rows of results.json, by hand, not from Wilson over the runs."""
    skilleval_cli.run("+experiment=trigger_eval", "skill=${example:csv-tidy}", "progress=false",
                      "backend.error_rate=0.15", "backend.max_retries=0", check=0)
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(path.read_text())
    rows = [r for r in res["results"] if r["verdict"] != "insufficient"]
    pos = [(r["triggers"], r["valid_runs"]) for r in rows if r["should_trigger"]]
    neg = [(r["triggers"], r["valid_runs"]) for r in rows if not r["should_trigger"]]
    want = {"recall": pos, "accuracy": pos + [(v - t, v) for t, v in neg],
            "precision": [(t, t) for t, _ in pos] + [(0, t) for t, _ in neg],
            "f1": [(2 * t, t + v) for t, v in pos] + [(0, t) for t, _ in neg]}
    runs = res["metrics"]["runs"]
    for name, pairs in want.items():
        assert (runs[name]["k"], runs[name]["n"]) == (sum(k for k, _ in pairs), sum(n for _, n in pairs))
        if runs[name]["n"] and 0 < runs[name]["k"] < runs[name]["n"]:
            assert (runs[name]["low"], runs[name]["high"]) == pytest.approx(clustered_by_hand(pairs)), name
    k, n = runs["accuracy"]["k"], runs["accuracy"]["n"]
    assert runs["accuracy"]["low"] < wilson(k, n)[0]  # wider than the trial interval


def test_routing_honours_max_error_rate(skilleval_cli) -> None:
    """More errored trials than trigger.max_error_rate allows: exit 3, as trigger_eval (60 %
    errors printed a routing accuracy of 0.92 over the 12 valid trials, exit 0)."""
    skills = "skills=[" + ",".join(str(p) for p in SKILLS) + "]"
    r = skilleval_cli.run("+experiment=routing", skills, f"cases={CASES}", "progress=false",
                          "backend.error_rate=0.7", "backend.max_retries=0", "trigger.self_check=false",
                          check=3)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("skilleval: error")]
    assert len(errors) == 1 and "max_error_rate" in errors[0] and "Traceback" not in r.stderr


def test_a_routing_sweep_table_shows_each_jobs_routing_accuracy(skilleval_cli) -> None:
    """``-m ... trigger.catalog=0,8``, the way to see routing hold up as the catalog grows:
    the sweep table showed '—' for every job."""
    skills = "skills=[" + ",".join(str(p) for p in SKILLS) + "]"
    r = skilleval_cli.run("-m", "+experiment=routing", skills, f"cases={CASES}", "progress=false",
                          "trigger.runs=1", "trigger.catalog=0,8", check=0)
    results = sorted(skilleval_cli.outputs.rglob("results.json"), key=lambda p: p.parent.name)
    accs = [json.loads(p.read_text())["accuracy"] for p in results]
    rows = [ln for ln in r.stdout.splitlines() if "trigger.catalog=" in ln and "│" in ln]
    assert len(rows) == 2
    for row, a in zip(rows, accs):
        assert f"{a['value']:.0%} [{a['low']:.0%}–{a['high']:.0%}]" in row, row


def test_a_query_with_no_valid_trial_is_named_not_silently_dropped(skilleval_cli) -> None:  # noqa: ANN001
    """A query whose every trial errored left the accuracy interval's clusters without a word."""
    r = skilleval_cli.run("+experiment=routing", "skills=bundled", "cases=${example:routing}/cases.json",
                          "backend.error_rate=0.5", "backend.max_retries=0", "trigger.max_error_rate=0.9",
                          "progress=false", check=0)
    [res] = skilleval_cli.results()
    unmeasured = json.loads(res.read_text())["unmeasured_queries"]
    assert unmeasured, "the faults must leave a query with no valid trial"
    line = " ".join(r.stdout.split())
    assert f"{len(unmeasured)} of 10 queries had no valid trial" in line
    assert all(q in line for q in unmeasured)
