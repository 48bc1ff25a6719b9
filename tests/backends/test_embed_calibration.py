"""The embed backend's calibration and its model of Claude's choice, on the real MiniLM weights.

These tests fail (never skip) when the `embed` extra is missing: CI installs it.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest

from skilleval.backends.embed_calibration import (
    ACCEPTANCE_SETS,
    CALIBRATION_FILE,
    calibration_rows,
)
from skilleval.backends.embed_features import (
    VARIANTS,
    choice_probabilities,
    combine,
    parse,
    skill_scores,
)
from skilleval.datasets import default_cases_path, load_trigger_cases
from skilleval.domain import ListedSkill
from skilleval.registry import default_registry
from skilleval.skills import load_skill

REPO = Path(__file__).resolve().parents[2]
ACCEPTANCE_FOLDERS = [REPO / "experiments" / "changelog-writer", REPO / "experiments" / "csv-tidy",
                      REPO / "tests" / "fixtures" / "embed" / "bank-reconciliation",
                      REPO / "tests" / "fixtures" / "embed" / "dog-trainer",
                      REPO / "tests" / "fixtures" / "embed" / "meeting-minutes",
                      REPO / "experiments" / "meeting-minutes"]


@pytest.fixture(scope="module")
def backend():
    return default_registry().build("backend", {"name": "embed"})


def _norm(q: str) -> str:
    return " ".join(q.lower().split())


def test_calibration_set_is_disjoint_from_the_acceptance_sets() -> None:
    rows = calibration_rows()
    cal_skills = {r[0] for r in rows}
    cal_queries = {_norm(r[3]) for r in rows}
    cal_descriptions = {r[2] for r in rows}
    for folder in ACCEPTANCE_FOLDERS:
        skill = load_skill(folder)
        assert skill.name in ACCEPTANCE_SETS and skill.name not in cal_skills, skill.name
        assert skill.description not in cal_descriptions
        queries = {_norm(c.query) for c in load_trigger_cases(default_cases_path(folder))}
        assert len(queries) == 20 and not queries & cal_queries, folder
    fit = json.loads(CALIBRATION_FILE.read_text())
    assert set(fit["data"]["disjoint_from"]) == set(ACCEPTANCE_SETS)
    assert sorted(cal_skills) == fit["data"]["examples"]


def test_shipped_fit_matches_the_calibration_set() -> None:
    """The JSON was fitted on the set as it stands (refit after editing the set)."""
    rows = calibration_rows()
    digest = hashlib.sha256(json.dumps([list(r[1:]) for r in rows]).encode()).hexdigest()
    fit = json.loads(CALIBRATION_FILE.read_text())
    assert fit["data"]["sha256"] == digest
    assert fit["data"]["rows"] == len(rows) and fit["data"]["positives"] == sum(r[4] for r in rows)


def test_exclusion_clauses_are_negative_evidence() -> None:
    csv = load_skill(REPO / "experiments" / "csv-tidy")
    parts = parse(csv.name, csv.description)
    assert "Do not use" not in parts.positive and "pivot tables" in parts.negative
    assert any("SQL queries" in f for f in parts.negative)
    slides = parse("release-notes-slides", "Build slide decks about a release. Use when the user "
                   "wants slides about what shipped, not a text changelog file.")
    assert "changelog" not in slides.positive and "not a text changelog file." in slides.negative
    plain = parse("x", "Plan trips. Use when the user wants an itinerary.")
    assert plain.negative == () and plain.positive == "x: Plan trips. Use when the user wants an itinerary."


def test_a_list_description_yields_each_listed_use_as_an_item() -> None:
    parts = parse("plant-care", "Care for houseplants. Use when leaves turn yellow, when the user "
                  "asks how often to water a cactus, or how to repot a plant. Do not use for "
                  "lawns, vegetable gardens or trees.")
    assert "when the user asks how often to water a cactus" in parts.items
    assert "Care for houseplants." in parts.items and "or how to repot a plant" in parts.items
    assert not any("lawns" in item for item in parts.items) and "lawns" in parts.negative[0]
    assert parts.positive not in parts.items and parts.label == "plant care"


def test_shipped_variant_is_the_one_the_decision_rule_picks() -> None:
    """The fit records every pre-registered variant; the shipped one has the lowest LOSO loss
    (within 0.001, fewer parameters, then the earlier variant) and its figures are the top-level ones."""
    fit = json.loads(CALIBRATION_FILE.read_text())
    table = fit["variant_comparison"]
    assert list(table) == list(VARIANTS)
    best = min(v["leave_one_skill_out"]["log_loss"] for v in table.values())
    near = [n for n, v in table.items() if v["leave_one_skill_out"]["log_loss"] < best + 0.001]
    assert fit["variant"] == min(near, key=lambda n: (table[n]["parameters"], list(VARIANTS).index(n)))
    assert table[fit["variant"]]["leave_one_skill_out"] == fit["leave_one_skill_out"]
    assert table[fit["variant"]]["item_weight"] == fit["item_weight"]
    assert table[fit["variant"]]["margin"] == fit["margin"]
    assert table[fit["variant"]]["exclusion"] == fit["exclusion"]
    assert table[fit["variant"]]["lexical_weight"] == fit["lexical_weight"]


def test_a_query_matching_one_listed_use_gains_from_the_item_feature(backend) -> None:
    """With the shipped item weight, a query that matches one use in a long list scores higher
    than with the whole text alone (the whole-text embedding dilutes it)."""
    skill = ListedSkill("home-helper", "Help around the house. Use when the user wants to plan a "
                        "weekly cleaning rota, fix a dripping tap, choose paint for a bedroom, "
                        "unblock a sink, hang shelves on a plasterboard wall, or lower a heating bill.")
    query = "my kitchen tap won't stop dripping, how do I change the washer"
    parts = [parse(skill.name, skill.description)]
    assert backend.item_weight > 0
    shipped = backend.scores((skill,), query)[skill.name]
    whole = skill_scores(parts, backend.vector(query), backend.vector, backend.penalty)[0][0]
    assert shipped > whole + 0.02


def test_a_query_the_description_excludes_scores_lower_than_without_the_exclusion(backend) -> None:
    query = "build a pivot table in sales.xlsx showing revenue by region"
    with_ex = ListedSkill("csv-tidy", "Clean messy CSV files: dedupe rows and fix headers. "
                          "Do not use for Excel pivot tables or charts.")
    without = ListedSkill("csv-tidy", "Clean messy CSV files: dedupe rows and fix headers.")
    assert backend.scores((with_ex,), query)["csv-tidy"] < backend.scores((without,), query)["csv-tidy"] - 0.05
    assert backend.choice((with_ex,), query)["csv-tidy"] < backend.choice((without,), query)["csv-tidy"]


def test_a_better_fitting_rival_takes_the_query(backend) -> None:
    """Claude picks one skill: listing a rival that fits better lowers the target's chance."""
    target = ListedSkill("changelog-writer", "Helps with project documentation tasks.")
    rival = ListedSkill("git-commit-helper", "Write git commit messages from staged changes; "
                        "squash, amend or revert commits.")
    query = "squash my last 4 commits into one before I open the PR"
    alone = backend.choice((target,), query)["changelog-writer"]
    listed = backend.choice((target, rival), query)
    assert listed["changelog-writer"] < alone and listed["git-commit-helper"] > listed["changelog-writer"]


def test_exclusion_modes_margin_and_rival_option() -> None:
    """The pre-registered exclusion variants: a margin makes a nearly-as-good exclusion cost
    the skill; ``hinge-item`` compares the exclusion with the best item; under ``rival`` the
    score is the positive similarity and the exclusion takes mass in the choice instead."""
    import numpy as np

    whole, best, neg = np.array([0.40]), np.array([0.60]), np.array([0.45])
    w = 0.5  # pos = 0.50
    assert combine(whole, best, neg, w)[0] == pytest.approx(0.50)  # exclusion fits worse: no cost
    assert combine(whole, best, neg, w, margin=0.1)[0] == pytest.approx(0.45)  # within the margin
    assert combine(whole, best, neg, w, margin=0.1, exclusion="hinge-item")[0] == pytest.approx(0.50)
    assert combine(whole, best, np.array([0.65]), w, exclusion="hinge-item")[0] == pytest.approx(0.45)
    assert combine(whole, best, np.array([0.9]), w, exclusion="rival")[0] == pytest.approx(0.50)
    plain = choice_probabilities([0.5, 0.1], -1.0, 8.0)
    with_rival = choice_probabilities([0.5, 0.1], -1.0, 8.0, rivals=[0.6, -1.0])
    assert with_rival[0] < plain[0] and sum(with_rival) < sum(plain)
    assert choice_probabilities([0.5, 0.1], -1.0, 8.0, rivals=[-1.0, -1.0]) == plain  # no exclusion
    assert [VARIANTS[n].parameters for n in ("whole", "blend", "blend-margin", "blend-exclusion-rival")] \
        == [2, 3, 4, 3]


def test_backend_scores_with_the_fits_exclusion_mode(backend) -> None:
    """The backend applies the fit's margin and exclusion mode (here overridden to a margin
    the shipped fit does not have) to its scores."""
    skill = ListedSkill("bird-feeder", "Choose and place garden bird feeders. Do not use for "
                        "keeping chickens or pet parrots.")
    query = "what should I feed my pet parrot"
    shipped = backend.scores((skill,), query)["bird-feeder"]
    saved = backend.margin, backend.exclusion, backend._prepared.copy()
    try:
        backend.margin, backend.exclusion = 0.5, "hinge"
        assert backend.scores((skill,), query)["bird-feeder"] < shipped - 0.1
        backend.exclusion = "rival"
        backend._prepared.clear()
        assert backend.choice((skill,), query)["bird-feeder"] < choice_probabilities(
            [backend.scores((skill,), query)["bird-feeder"]], backend.intercept, backend.slope)[0]
    finally:
        backend.margin, backend.exclusion = saved[0], saved[1]
        backend._prepared.clear()
        backend._prepared.update(saved[2])


def test_choice_has_a_none_option() -> None:
    probs = choice_probabilities([0.1, 0.5, 0.2], intercept=-1.4, slope=10.5)
    assert 0 < sum(probs) < 1 and max(probs) == probs[1]
    assert choice_probabilities([], -1.4, 10.5) == []


def test_unseen_paraphrased_set_beats_a_constant_answer(backend) -> None:
    """On the unseen bank-reconciliation set (never in the fit), the embed backend's query
    accuracy is above the 0.5 a constant answer gets (seeded draws: deterministic)."""
    from skilleval.config import example_distractors
    from skilleval.trigger.policies import TriggerSettings
    from skilleval.trigger.runner import TrialRunner

    folder = REPO / "tests" / "fixtures" / "embed" / "bank-reconciliation"
    runner = TrialRunner(backend, settings=TriggerSettings(runs=5, policy="fixed"), store=None)
    results = asyncio.run(runner.evaluate(load_skill(folder), load_trigger_cases(default_cases_path(folder)),
                                          [load_skill(p) for p in example_distractors()]))
    passed = [r.passed for r in results]
    assert None not in passed and sum(passed) / len(passed) >= 0.65


def test_fit_takes_another_encoder_and_reports_per_row_held_out_loss(bag_of_words) -> None:
    """benchmarks/embed_model_choice.py compares encoders through fit(encode, model): the
    encoder passed in is the one used, and the per-row held-out losses add up to the LOSO loss."""
    from skilleval.backends.embed_calibration import choose, fit

    bag_of_words = bag_of_words(64)
    res = fit(bag_of_words, "bag-of-words", per_row=True)
    shipped = json.loads(CALIBRATION_FILE.read_text())
    assert res["model"] == "bag-of-words" and len(res["center"]) == 64
    assert res["data"]["sha256"] == shipped["data"]["sha256"]
    rows = res["loso_row_loss"]
    assert len(rows) == shipped["data"]["rows"] and min(rows) > 0
    assert abs(sum(rows) / len(rows) - res["leave_one_skill_out"]["log_loss"]) < 1e-5
    assert res["leave_one_skill_out"]["log_loss"] != shipped["leave_one_skill_out"]["log_loss"]
    assert "loso_row_loss" not in fit(bag_of_words, "bag-of-words")
    # the variants without a learned metric (those take seconds to minutes; test_embed_metric)
    names = [n for n in VARIANTS if VARIANTS[n].metric_l2 is None]
    shipped_fit, fits = choose(bag_of_words, "bag-of-words", names)
    assert list(fits) == names and 0.0 <= fits["blend"]["item_weight"] <= 1.0
    assert fits["whole"]["item_weight"] == 0.0 and fits["best-item"]["item_weight"] == 1.0
    loso = {n: f["leave_one_skill_out"]["log_loss"] for n, f in fits.items()}
    assert loso[shipped_fit["variant"]] < min(loso.values()) + 0.001
    assert "loso_row_loss" not in shipped_fit and list(shipped_fit["variant_comparison"]) == names
