"""The learned diagonal metric of the embed backend (embed_metric): its likelihood is the
shipped variant's, its gradient is right, and the backend applies a fit's weights."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from skilleval.backends.embed_calibration import _row_loss
from skilleval.backends.embed_features import EXCLUSION_PENALTY, NO_EXCLUSION, VARIANTS, parse, skill_scores
from skilleval.backends.embed_metric import Products, fit_metric, loss_and_grad
from skilleval.domain import ListedSkill
from skilleval.registry import default_registry


def _products(seed: int, rows: int = 40, dims: int = 6) -> tuple[Products, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (rows, 3)
    items_mask = rng.random((*shape, 4)) < 0.6
    items_mask[..., 0] = True  # the positive text itself is always an item
    prods = Products(rng.normal(0, 0.1, (*shape, dims)), rng.normal(0, 0.1, (*shape, 4, dims)), items_mask,
                     rng.normal(0, 0.1, (*shape, 3, dims)), rng.random((*shape, 3)) < 0.5)
    return prods, rng.random(rows) < 0.5


def test_gradient_matches_finite_differences() -> None:
    prods, labels = _products(1)
    theta = np.concatenate([[-0.5, 6.0, 0.4, 0.05], np.random.default_rng(2).normal(0, 0.3, 6)])
    _, grad = loss_and_grad(theta, prods, labels, EXCLUSION_PENALTY, 0.1, NO_EXCLUSION)
    step = 1e-6
    numeric = [(loss_and_grad(theta + e, prods, labels, EXCLUSION_PENALTY, 0.1, NO_EXCLUSION)[0]
                - loss_and_grad(theta - e, prods, labels, EXCLUSION_PENALTY, 0.1, NO_EXCLUSION)[0]) / (2 * step)
               for e in np.eye(len(theta)) * step]
    assert np.allclose(grad, numeric, atol=1e-7)


def test_with_unit_weights_it_is_the_shipped_variants_likelihood() -> None:
    """v = 0 (every weight 1) gives blend-item-margin's row losses exactly: the same model,
    only its similarities can be re-weighted."""
    prods, labels = _products(3)
    whole = prods.whole.sum(-1)
    best = np.where(prods.item_mask, prods.items.sum(-1), -np.inf).max(-1)
    neg = np.where(prods.negative_mask.any(-1),
                   np.where(prods.negative_mask, prods.negative.sum(-1), -np.inf).max(-1), NO_EXCLUSION)
    head = np.array([-0.3, 7.0, 0.2, 0.1])
    expected = _row_loss(head, (whole, best, neg), labels, VARIANTS["blend-item-margin"])
    got = loss_and_grad(np.concatenate([head, np.zeros(6)]), prods, labels, EXCLUSION_PENALTY, 1.0,
                        NO_EXCLUSION, per_row=True)
    assert np.allclose(got, expected)


def test_the_fit_weights_the_dimension_that_carries_the_label() -> None:
    """Dimension 0 of the target's products tells the labels apart, the others are noise: the
    fitted metric weighs dimension 0 above every other; a huge penalty keeps every weight at 1."""
    prods, _ = _products(4, rows=120)
    labels = np.arange(120) % 2 == 0
    prods.whole[:, 0, 0] = np.where(labels, 0.3, -0.3)
    prods.items[:, 0, 0, 0] = prods.whole[:, 0, 0]
    theta = fit_metric(prods, labels, EXCLUSION_PENALTY, 0.01, NO_EXCLUSION)
    weights = np.exp(theta[4:])
    assert weights[0] > 1.0 and weights[0] > weights[1:].max()
    frozen = fit_metric(prods, labels, EXCLUSION_PENALTY, 1e6, NO_EXCLUSION)
    assert np.abs(frozen[4:]).max() < 1e-3


def test_backend_applies_the_fits_dimension_weights() -> None:
    """The backend weighs the query vector by the fit's dimension weights (set by hand here:
    the shipped fit has them only when the decision rule chose a metric), and says so in its
    identity."""
    backend = default_registry().build("backend", {"name": "embed"})
    listing = (ListedSkill("clock-mender", "Help with a pendulum clock that runs slow. Not for wristwatches."),
               ListedSkill("kite-flyer", "Help with kites, lines and the wind on a beach."))
    query = "my pendulum keeps stopping"
    base_identity = backend.identity()["features"]
    base = backend.scores(listing, query)
    weights = np.linspace(0.5, 1.5, len(backend.vector(query))).astype(np.float32)
    backend._metric = weights
    parts = [parse(s.name, s.description) for s in listing]
    expected, _, _ = skill_scores(parts, backend.vector(query) * weights, backend.vector, backend.penalty,
                                  backend.item_weight, backend.named_items, backend.margin, backend.exclusion)
    scored = backend.scores(listing, query)
    assert list(scored.values()) == pytest.approx(expected)
    assert scored != pytest.approx(base)
    assert backend.identity()["features"] == [*base_identity, hashlib.sha256(weights.tobytes()).hexdigest()[:16]]


def test_fit_of_a_metric_variant_records_its_weights_and_held_out_figures(monkeypatch, bag_of_words) -> None:
    """``embed_calibration.fit`` on a diag variant (here on three calibration skills and a
    16-dimension hashed bag of words, so it takes a second): the weights, their L2 strength
    and leave-one-skill-out figures are recorded, every fold refitted."""
    from skilleval.backends import embed_calibration

    rows = embed_calibration.calibration_rows()
    keep = sorted({r[0] for r in rows})[:3]
    monkeypatch.setattr(embed_calibration, "calibration_rows", lambda: [r for r in rows if r[0] in keep])

    res = embed_calibration.fit(bag_of_words(16), "bag-of-words", per_row=True, variant="diag-1")
    assert res["variant"] == "diag-1" and res["metric_l2"] == 1.0 and res["exclusion"] == "hinge-item"
    assert len(res["dimension_weights"]) == 16 and min(res["dimension_weights"]) > 0
    assert res["dimension_weights"] != [1.0] * 16
    assert res["data"]["examples"] == keep and len(res["loso_row_loss"]) == res["data"]["rows"]
    held = res["leave_one_skill_out"]["log_loss"]
    assert abs(sum(res["loso_row_loss"]) / len(res["loso_row_loss"]) - held) < 1e-5
    assert res["in_sample"]["log_loss"] < held
