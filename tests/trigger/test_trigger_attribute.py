"""`+experiment=attribute`: sentence attribution by leave-one-out and Shapley values."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from skilleval.trigger import attribution as attr

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "tests" / "fixtures" / "attribute" / "tidy"  # sentence 1 carries every domain word
CASES = REPO / "experiments" / "csv-tidy" / "evals" / "trigger_eval.json"


def test_exact_and_sampled_shapley_on_a_known_game() -> None:
    # v(S) per "query": sentence 0 is worth 1, sentence 1 worth 0.5 but only with sentence 0.
    def value(s: frozenset[int]) -> np.ndarray:
        return np.array([1.0 * (0 in s) + 0.5 * (0 in s and 1 in s), 0.2 * (2 in s)])

    exact = attr.shapley_exact(3, value)
    assert np.allclose(exact[:, 0], [1.25, 0.25, 0.0]) and np.allclose(exact[:, 1], [0, 0, 0.2])
    sampled = attr.shapley_sampled(3, attr.permutations(3, 400, seed=1), value)
    assert np.allclose(sampled, exact, atol=0.06)
    assert np.allclose(attr.leave_one_out(3, value)[:, 0], [1.5, 0.5, 0.0])
    assert attr.split_sentences("One. Two three! Four?  Five") == ["One.", "Two three!", "Four?", "Five"]


def _result(cli) -> dict:  # noqa: ANN001
    return json.loads(max(cli.outputs.rglob("results.json"), key=lambda p: p.stat().st_mtime_ns).read_text())


def test_domain_sentence_ranks_first_with_interval_excluding_zero(skilleval_cli) -> None:
    args = ("+experiment=attribute", f"skill={SKILL}", f"cases={CASES}", "progress=false")
    r = skilleval_cli.run(*args, check=0)
    assert "sentence attribution" in r.stdout
    res = _result(skilleval_cli)
    assert res["method"] == "exact" and res["coalitions"] == 8
    assert res["ranking"][0] == 0
    top = res["attribution"][0]["shapley_recall"]
    assert top["low"] > 0 and top["queries"] == 10
    loo = res["attribution"][0]["loo_recall"]
    assert loo["low"] > 0  # removing it loses recall, with an interval excluding 0
    # Trials are content-addressed: a second run pays for nothing.
    skilleval_cli.run(*args, check=0)
    rows = json.loads(skilleval_cli.run("sql", "select summary_json from runs where status='done' "
                                        "order by ts", "--format", "json", check=0).stdout)
    second = json.loads(rows[-1]["summary_json"])
    assert second["calls_made"] == 0 and second["calls_cached"] > 0


def test_sampled_shapley_beyond_exact_max(skilleval_cli) -> None:
    skilleval_cli.run("+experiment=attribute", f"skill={SKILL}", f"cases={CASES}", "progress=false",
                      "attribute.exact_max=2", "attribute.permutations=30", "trigger.runs=1", check=0)
    res = _result(skilleval_cli)
    assert res["method"] == "sampled" and res["permutations"] == 30
    assert res["ranking"][0] == 0
