"""Backend tests: the real claude CLI fixture (`claude_bin`) and serve-sim fixtures live in
tests/conftest.py."""
from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import pytest


@pytest.fixture
def bag_of_words() -> Callable[[int], Callable[[list[str]], np.ndarray]]:
    """Makes a stand-in sentence encoder of ``dims`` dimensions (a hashed bag of words, unit
    length), for tests that pass another encoder to the embed calibration's fit."""
    def make(dims: int) -> Callable[[list[str]], np.ndarray]:
        def encode(texts: list[str]) -> np.ndarray:
            out = np.zeros((len(texts), dims), dtype=np.float32)
            for row, text in enumerate(texts):
                for word in text.lower().split():
                    out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % dims] += 1.0
            return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return encode
    return make
