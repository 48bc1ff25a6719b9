"""The lexical evidence of the pre-registered ``blend-lexical`` variant (embed_lexical): terms
weighed by IDF over the listing being scored, on made-up text; and its place in the score."""
from __future__ import annotations

import numpy as np
import pytest

from skilleval.backends.embed_features import VARIANTS, combine, parse
from skilleval.backends.embed_lexical import (
    idf_weights,
    lexical_evidence,
    listing_evidence,
    terms,
)
from skilleval.domain import ListedSkill
from skilleval.registry import default_registry

LISTED = ["quilt maker: sew quilts from fabric squares, help with the batting and the binding",
          "kite flyer: help with kites, lines and the wind on a beach",
          "clock mender: help with a pendulum clock that runs slow"]


def test_terms_are_stemmed_lowercase_words_of_two_or_more_characters() -> None:
    assert terms("Sewing QUILTS, a b_c 42!") == frozenset({"sew", "quilt", "42"})


def test_a_term_every_listed_description_shares_adds_nothing() -> None:
    q = terms("help")
    assert idf_weights(q, LISTED) == {"help": 0.0}
    # "help" is in all three, so a query of only it gives no lexical evidence to anyone
    assert lexical_evidence("help me", LISTED, LISTED)[:2] == [0.0, 0.0]
    # ... and adding it to a query does not change which skill the evidence points to
    with_help = lexical_evidence("help with the binding", LISTED, LISTED)
    without = lexical_evidence("the binding", LISTED, LISTED)
    assert with_help == pytest.approx(without)


def test_a_rare_shared_term_adds_and_weighs_by_the_listing() -> None:
    lex = lexical_evidence("my pendulum keeps stopping", LISTED, LISTED)
    assert lex[2] > 0.0 and lex[0] == lex[1] == 0.0
    # a term one listed description has outweighs one two of them have
    w = idf_weights(terms("pendulum beach wind fabric clock"), LISTED + ["beach hut: wind and fabric"])
    assert w["pendulum"] == w["clock"] > w["beach"] == w["wind"] == w["fabric"] > 0.0
    # the weights come from the listing: list only the clock mender and "pendulum" weighs less
    assert idf_weights(terms("pendulum"), LISTED[2:])["pendulum"] < idf_weights(terms("pendulum"), LISTED)["pendulum"]


def test_a_term_the_description_only_excludes_earns_nothing() -> None:
    desc = "Fix bicycle brakes and gears. Do not use for motorbikes or scooters."
    parts = parse("bike-repair", desc)
    other = ("kite-flyer", LISTED[1], parse("kite-flyer", LISTED[1]).positive)
    lex = listing_evidence("my scooter brakes squeal", (("bike-repair", desc, parts.positive), other))
    only_brakes = listing_evidence("my brakes squeal", (("bike-repair", desc, parts.positive), other))
    assert 0.0 < lex[0] < only_brakes[0]  # "scooter" is in the query's weight, not in the positive text


def test_blend_lexical_adds_lam_times_lex_after_the_dense_hinge() -> None:
    whole, best, neg, lex = np.array([0.40]), np.array([0.60]), np.array([0.70]), np.array([0.5])
    dense = combine(whole, best, neg, 0.5)[0]
    assert dense == pytest.approx(0.30)  # 0.50 - (0.70 - 0.50)
    assert combine(whole, best, neg, 0.5, lex=lex, lex_weight=0.2)[0] == pytest.approx(dense + 0.1)
    assert VARIANTS["blend-lexical"].parameters == 4 and VARIANTS["blend-lexical"].lexical
    assert not any(v.lexical for n, v in VARIANTS.items() if n != "blend-lexical")


def test_backend_applies_the_fits_lexical_weight() -> None:
    """The backend adds ``lexical_weight * lex`` to each listed skill's score when the fit has
    one (here set by hand: the shipped fit's weight is whatever the decision rule chose)."""
    backend = default_registry().build("backend", {"name": "embed"})
    listing = (ListedSkill("clock-mender", "Help with a pendulum clock that runs slow."),
               ListedSkill("kite-flyer", "Help with kites, lines and the wind on a beach."))
    query = "my pendulum keeps stopping"
    backend.lexical_weight = 0.0
    base = backend.scores(listing, query)
    backend.lexical_weight = 0.5
    lex = listing_evidence(query, tuple((s.name, s.description, parse(s.name, s.description).positive)
                                        for s in listing))
    scored = backend.scores(listing, query)
    assert lex[0] > 0.0 and lex[1] == 0.0
    assert scored["clock-mender"] == pytest.approx(base["clock-mender"] + 0.5 * lex[0])
    assert scored["kite-flyer"] == pytest.approx(base["kite-flyer"])
    assert backend.identity()["features"][-1] == 0.5
