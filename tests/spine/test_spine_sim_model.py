"""The simulated model behind `stub`: deterministic, varied across repeats, lexically sensible."""
from __future__ import annotations

from skilleval.domain import ListedSkill
from skilleval.sim import model as sim

MODEL = "sim-1"
CSV = ListedSkill("csv-tidy", "Clean and tidy messy CSV files: dedupe rows and normalise headers.")
PDF = ListedSkill("pdf-form-filler", "Fill in PDF forms and flatten them. Use for fillable pdf forms.")
CHANGELOG = ListedSkill("changelog-writer", "Write a changelog entry or release notes from merged "
                        "pull requests and git commits.")


def test_same_seed_same_decision() -> None:
    listing = (CSV, PDF)
    q = "dedupe the rows of my csv"
    for repeat in range(10):
        s1 = sim.draw_seed(MODEL, listing, q, repeat)
        s2 = sim.draw_seed(MODEL, listing, q, repeat)
        assert s1 == s2
        assert sim.decide(listing, q, MODEL, s1) == sim.decide(listing, q, MODEL, s2)
    assert sim.draw_seed(MODEL, listing, q, 0) != sim.draw_seed("sim-2", listing, q, 0)
    assert sim.draw_seed(MODEL, listing, q, 0) != sim.draw_seed(MODEL, (CSV,), q, 0)


def test_repeats_differ() -> None:
    listing = (CSV, PDF)
    q = "tidy the csv headers"
    seeds = {sim.draw_seed(MODEL, listing, q, r) for r in range(40)}
    assert len(seeds) == 40
    # Put the query right at the curve's midpoint (p = 0.5): repeats must then disagree.
    best = max(sim.relevance(listing, q, sim.Params()).values())
    params = sim.Params(midpoint=best - sim.model_shift(MODEL))
    decisions = [sim.decide(listing, q, MODEL, sim.draw_seed(MODEL, listing, q, r), params) for r in range(40)]
    assert abs(decisions[0].probability - 0.5) < 1e-9
    fired = [d.fired for d in decisions]
    assert None in fired and "csv-tidy" in fired
    assert 8 <= fired.count(None) <= 32


def test_exclusion_lowers_the_score_of_an_excluded_query() -> None:
    plain = ListedSkill("data-tidy", "Clean and tidy messy data files and spreadsheets.")
    excluding = ListedSkill("data-tidy", "Clean and tidy messy data files and spreadsheets. "
                            "Not for PDF invoices or scanned receipts.")
    q = "extract the totals from these pdf invoices"
    params = sim.Params()
    s_plain = sim.relevance((plain,), q, params)["data-tidy"]
    s_excl = sim.relevance((excluding,), q, params)["data-tidy"]
    assert s_excl < s_plain
    p_plain = sim.decide((plain,), q, MODEL, b"\0" * 32, params).probability
    p_excl = sim.decide((excluding,), q, MODEL, b"\0" * 32, params).probability
    assert p_excl < p_plain
    # the exclusion does not hurt a query about what the skill is for
    q_in = "tidy the messy spreadsheets"
    assert sim.relevance((excluding,), q_in, params)["data-tidy"] > 0
    # terms after the marker become negative, terms before it stay positive
    prof = sim.profile(excluding)
    assert sim.stem("invoices") in prof.negative and sim.stem("invoices") not in prof.positive
    assert sim.stem("spreadsheets") in prof.positive


def test_matching_words_score_higher() -> None:
    q = "write the release notes and changelog from the merged pull requests"
    scores = sim.relevance((CHANGELOG, CSV, PDF), q, sim.Params())
    assert scores["changelog-writer"] > scores["csv-tidy"]
    assert scores["changelog-writer"] > scores["pdf-form-filler"]
    p_match = sim.decide((CHANGELOG,), q, MODEL, b"\0" * 32).probability
    p_other = sim.decide((CSV,), q, MODEL, b"\0" * 32).probability
    assert p_match > p_other
    # and the listing's best match is the one that (almost always) fires when something does
    listing = (CHANGELOG, CSV, PDF)
    fired = [sim.decide(listing, q, MODEL, sim.draw_seed(MODEL, listing, q, r)).fired for r in range(60)]
    fired = [f for f in fired if f]
    assert fired and fired.count("changelog-writer") > len(fired) * 0.8


def test_adding_query_words_to_the_description_raises_the_probability() -> None:
    q = "summarise our commits for the customers"
    before = ListedSkill("changelog-writer", "Write a changelog entry from git history.")
    after = ListedSkill("changelog-writer", "Write a changelog entry from git history. "
                        "Use to summarise commits for customers.")
    p0 = sim.decide((before,), q, MODEL, b"\0" * 32).probability
    p1 = sim.decide((after,), q, MODEL, b"\0" * 32).probability
    assert p1 > p0


def test_text_processing() -> None:
    assert sim.stem("changelogs") == "changelog"
    assert sim.terms("Please help me with THE csv files") == ("help", "csv", "file")
    assert sim.weight("file") < sim.weight("csv")
