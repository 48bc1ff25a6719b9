"""Audit of sentence attribution against an independent brute force: Shapley values as the
average marginal contribution over *every ordering* of the sentences (n! of them, not the
2^n coalition formula the engine uses), recomputed from the store's trial rows."""
from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from skilleval.trigger import attribution as attr

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "tests" / "fixtures" / "attribute" / "tidy"
CASES = REPO / "experiments" / "csv-tidy" / "evals" / "trigger_eval.json"
VALID = ("triggered", "not_triggered")


def _by_orderings(n: int, v) -> np.ndarray:  # noqa: ANN001
    perms = list(itertools.permutations(range(n)))
    out = np.zeros((n, len(v(frozenset()))))
    for p in perms:
        seen: frozenset[int] = frozenset()
        for i in p:
            out[i] += v(seen | {i}) - v(seen)
            seen = seen | {i}
    return out / math.factorial(n)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_exact_shapley_equals_the_average_over_every_ordering(n: int) -> None:
    rng = np.random.default_rng(n)
    table = {s: rng.uniform(0, 1, 7) for s in attr.coalitions_exact(n)}
    v = table.__getitem__
    exact = attr.shapley_exact(n, v)
    assert np.allclose(exact, _by_orderings(n, v))
    full, empty = frozenset(range(n)), frozenset()
    assert np.allclose(exact.sum(axis=0), table[full] - table[empty])  # efficiency, per query
    # sampled: efficient for every set of permutations, and exact when they are all of them
    perms = attr.permutations(n, 5, seed=2)
    assert np.allclose(attr.shapley_sampled(n, perms, v).sum(axis=0), table[full] - table[empty])
    every = list(itertools.permutations(range(n)))
    assert np.allclose(attr.shapley_sampled(n, every, v), exact)
    loo = attr.leave_one_out(n, v)
    assert np.allclose(loo, np.stack([table[full] - table[full - {i}] for i in range(n)]))


def test_attribute_figures_match_a_brute_force_from_the_trial_rows(skilleval_cli) -> None:  # noqa: ANN001
    out = skilleval_cli.run("+experiment=attribute", f"skill={SKILL}", f"cases={CASES}",
                            "progress=false", "trigger.runs=2", "backend.error_rate=0.2",
                            "backend.max_retries=0", "trigger.max_error_rate=1", check=0)
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(path.read_text())
    sentences = res["sentences"]
    n = len(sentences)
    cases = json.loads(CASES.read_text())
    trials = json.loads(skilleval_cli.run(
        "sql", "select description, query, outcome from trials where skill = 'tidy-helper'",
        "--format", "json", check=0).stdout)
    assert any(t["outcome"] not in VALID for t in trials), "the run should contain errors"
    description = next(t["description"] for t in trials if t["description"].startswith(sentences[0])
                       and len(t["description"]) >= len(" ".join(sentences)))

    def text(s: frozenset[int]) -> str:
        return description if len(s) == n else " ".join(sentences[i] for i in sorted(s))

    def v(s: frozenset[int]) -> np.ndarray:
        out = []
        for c in cases:
            mine = [t for t in trials if t["description"] == text(s) and t["query"] == c["query"]]
            valid = [t for t in mine if t["outcome"] in VALID]
            assert mine, (sorted(s), c["query"])
            out.append(sum(t["outcome"] == "triggered" for t in valid) / len(valid) if valid else np.nan)
        return np.array(out)

    table = {s: v(s) for s in attr.coalitions_exact(n)}
    shap = _by_orderings(n, table.__getitem__)
    positive = np.array([c["should_trigger"] for c in cases])
    full, empty = frozenset(range(n)), frozenset()
    for i, row in enumerate(res["attribution"]):
        for metric, mask in (("recall", positive), ("false_trigger_rate", ~positive)):
            x = shap[i][mask]
            assert row[f"shapley_{metric}"]["value"] == pytest.approx(np.nanmean(x)), (i, metric)
            assert row[f"shapley_{metric}"]["queries"] == int((~np.isnan(x)).sum())
            loo = (table[full] - table[full - {i}])[mask]
            assert row[f"loo_{metric}"]["value"] == pytest.approx(np.nanmean(loo)), (i, metric)
            lo, hi = row[f"shapley_{metric}"]["low"], row[f"shapley_{metric}"]["high"]
            assert lo <= row[f"shapley_{metric}"]["value"] <= hi
    # efficiency over the queries every coalition measured
    both = positive & ~np.isnan(shap).any(axis=0)
    total = sum(float(np.mean(shap[i][both])) for i in range(n))
    assert total == pytest.approx(float(np.mean((table[full] - table[empty])[both])))
    # the full description's rates are mean per-query trigger rates (named so: "recall_full"
    # held the first of them and read as a recall of verdicts)
    assert "recall_full" not in res and "ftr_full" not in res
    base = res["full_description_mean_trigger_rate"]
    # over the queries measured under every description: the ones the Shapley effects are over
    # (it was over all queries, so the effects did not sum to a change of the printed rate)
    complete = ~np.isnan(np.vstack(list(table.values()))).any(axis=0)
    assert base["should_trigger"] == pytest.approx(np.nanmean(table[full][positive & complete]))
    assert base["should_not_trigger"] == pytest.approx(np.nanmean(table[full][~positive & complete]))
    assert base["queries"] == {"should_trigger": int((positive & complete).sum()),
                               "should_not_trigger": int((~positive & complete).sum())}
    neg = ~positive & complete
    assert sum(float(np.mean(shap[i][neg])) for i in range(n)) == pytest.approx(
        float(np.mean((table[full] - table[empty])[neg])))
    shown = " ".join(out.stdout.split())
    assert f"full description: mean trigger rate {base['should_trigger']:.2f} over " in shown, shown
    assert "the queries measured under every description" in shown
    assert "recall: mean trigger rate over should-trigger queries" in " ".join(out.stdout.split())


def test_sampled_shapley_interval_covers_the_exact_value_when_queries_agree() -> None:
    """Three redundant sentences (any one of them triggers), every query alike: the exact
    Shapley value of each is 1/3, the sampled one is off by the permutations' luck, and an
    interval over queries alone was a single point that excluded 1/3 almost every time."""
    n = 7

    def v(s: frozenset[int]) -> np.ndarray:
        return np.full(10, 1.0 if s & {0, 1, 2} else 0.0)

    exact = attr.shapley_exact(n, v)
    assert np.allclose(exact[:3], 1 / 3) and np.allclose(exact[3:], 0)
    covered = 0
    for seed in range(100):
        perms = attr.permutations(n, 64, seed)
        marg = attr.marginals(n, perms, v)
        shap = marg.mean(axis=0)
        assert np.allclose(shap, attr.shapley_sampled(n, perms, v))
        mean, lo, hi = attr.paired_interval(shap[0], boot=1000, confidence=0.95, seed=seed,
                                            per_perm=marg[:, 0])
        assert mean == pytest.approx(shap[0].mean()) and lo <= mean <= hi
        covered += lo <= 1 / 3 <= hi
    assert covered >= 85  # nominal 95 %; the permutation count is binomial, so a little under


def test_one_query_has_no_interval(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """A single should-trigger query: its effect is known, an interval over queries is not
    (it printed "+0.50 [+0.50, +0.50]")."""
    assert attr.paired_interval(np.array([0.5, np.nan]), boot=100, confidence=0.95, seed=0) == (0.5, None, None)
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([
        {"query": "dedupe contacts.csv and trim the header whitespace", "should_trigger": True},
        {"query": "what is the capital of Australia?", "should_trigger": False},
        {"query": "write a haiku about autumn", "should_trigger": False}]))
    r = skilleval_cli.run("+experiment=attribute", f"skill={SKILL}", f"cases={cases}",
                          "progress=false", "trigger.runs=2", check=0)
    assert "CI n/a: 1 query" in r.stdout
    res = json.loads(next(skilleval_cli.outputs.rglob("results.json")).read_text())
    for row in res["attribution"]:
        assert row["shapley_recall"]["low"] is None and row["shapley_recall"]["queries"] == 1
        assert row["shapley_false_trigger_rate"]["low"] is not None  # two queries: an interval
