"""Embeddings cached by text hash: in memory, and on disk under the store root.

One ``.npy`` file per text, written to a temporary name and renamed into place, so a crash
or two processes of one sweep writing the same text never leave a torn file behind.
The folder is keyed by the model name, so a different model never reads these vectors.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable, Sequence

import numpy as np


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, encode: Callable[[Sequence[str]], np.ndarray], model: str) -> None:
        self._encode = encode
        self._model = model
        self._mem: dict[str, np.ndarray] = {}
        self._dir: Path | None = None
        self.encoded = 0  # texts actually run through the model (cache misses)

    def use_dir(self, root: Path) -> None:
        self._dir = Path(root) / "embeddings" / self._model

    def get(self, text: str) -> np.ndarray:
        key = text_hash(text)
        vec = self._mem.get(key)
        if vec is not None:
            return vec
        vec = self._load(key)
        if vec is None:
            vec = self._encode([text])[0]
            self.encoded += 1
            self._save(key, vec)
        self._mem[key] = vec
        return vec

    def _path(self, key: str) -> Path | None:
        return None if self._dir is None else self._dir / key[:2] / f"{key}.npy"

    def _load(self, key: str) -> np.ndarray | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            vec = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None  # unreadable: recompute and overwrite
        return vec if vec.ndim == 1 else None

    def _save(self, key: str, vec: np.ndarray) -> None:
        path = self._path(key)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                np.save(fh, vec, allow_pickle=False)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only store only loses the on-disk cache, never the answer
