"""The numpy forward pass of all-MiniLM-L6-v2 against the model's reference implementation.

``tests/fixtures/embed/minilm_reference.json`` holds vectors that sentence-transformers made
from the same shipped weights (``make_minilm_reference.py`` beside it says how). These tests
load the real weights and fail (never skip) when the `embed` extra is missing: CI installs it.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from skilleval.backends.embed_model import Encoder, shared_encoder

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "embed" / "minilm_reference.json"


def test_numpy_forward_pass_matches_sentence_transformers() -> None:
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    ours = shared_encoder().encode(ref["sentences"])
    expected = np.asarray(ref["vectors"], dtype=np.float32)
    assert ours.shape == expected.shape == (len(ref["sentences"]), 384)
    cosines = (ours * expected).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(expected, axis=1))
    assert cosines.min() >= 0.999, dict(zip(ref["sentences"], cosines.round(5)))
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_vector_does_not_depend_on_the_batch() -> None:
    enc: Encoder = shared_encoder()
    alone = enc.encode(["rename the columns of report.csv"])[0]
    batched = enc.encode(["a much longer sentence about something else entirely, with more tokens",
                          "rename the columns of report.csv"])[1]
    assert np.allclose(alone, batched, atol=1e-6)
