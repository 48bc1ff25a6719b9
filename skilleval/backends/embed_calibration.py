"""How the `embed` backend turns similarities into trigger probabilities, and where its fit
comes from.

**The model.** Every listed skill gets a score for the query (``embed_features``: cosine
similarity to the name + description without its exclusion clauses, lowered when an
exclusion clause fits the query better). Similarities are taken between *centred* vectors:
the mean embedding of the calibration queries is subtracted before normalising, which removes
the direction every request shares ("a user asking for help") so that what differs between
texts carries the cosine. Claude then picks at most one skill: skill ``i`` fires with
probability ``exp(intercept + slope * score_i) / (1 + sum_j exp(intercept + slope * score_j))``
and no skill fires with the remaining probability (the "none" option, logit 0). A close rival
takes probability from the target, as it does for Claude.

**The fit.** ``intercept`` and ``slope`` maximise the likelihood of ``should_trigger`` (the
target fired, or not) on a labelled set *disjoint from every acceptance set*:
``embed_calibration_set.json`` holds (a) three bundled examples (migration-review,
recipe-scaler, dockerfile-slim): each of their 20 labelled queries is scored once against the
example's shipped one-line description and once against a full description written for the
calibration from that skill's own "When this applies" section; and (b) two skills written only
for the calibration (regex-helper, trip-itinerary) with 20 labelled queries each (10 should
trigger, 10 near-misses). 160 rows, 100 distinct queries, 80 positive; every row lists the
target with the four bundled distractors, as the benchmark does. The JSON records the data,
the in-sample loss and accuracy and the leave-one-skill-out (5-fold) loss and accuracy (the
centring vector is computed once on all calibration queries, also for the folds).

The acceptance sets (``ACCEPTANCE_SETS``: changelog-writer, csv-tidy, the unseen
bank-reconciliation fixture) and meeting-minutes (same skill as the older unseen fixture)
never enter the fit; ``tests/backends/test_embed_calibration.py`` checks that.
Refit with ``python -m skilleval.backends.embed_calibration``. The encoder itself was chosen
by the same leave-one-skill-out loss (``benchmarks/embed_model_choice.py``), never by the
acceptance sets' scores.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

CALIBRATION_FILE = Path(__file__).with_name("embed_calibration.json")
CALIBRATION_SET = Path(__file__).with_name("embed_calibration_set.json")
#: Evaluated by benchmarks/embed_accuracy.py; never part of the calibration.
ACCEPTANCE_SETS = ("changelog-writer", "csv-tidy", "bank-reconciliation", "meeting-minutes")


def load_calibration(path: Path = CALIBRATION_FILE) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def calibration_rows() -> list[tuple[str, str, str, str, bool]]:
    """(skill, variant, description, query, should_trigger) for the calibration set."""
    from skilleval.datasets import default_cases_path, load_trigger_cases
    from skilleval.skills import load_skill

    root = Path(str(resources.files("skilleval.examples")))
    spec = json.loads(CALIBRATION_SET.read_text(encoding="utf-8"))
    rows = []
    for entry in spec["skills"]:
        if "cases" in entry:  # a skill written for the calibration, with its own queries
            rows += [(entry["name"], "written", entry["description"], q, bool(y))
                     for q, y in entry["cases"]]
            continue
        folder = root / entry["example"]
        skill = load_skill(folder)
        cases = load_trigger_cases(default_cases_path(folder))
        for variant, desc in (("shipped", skill.description), ("written", entry["written_description"])):
            rows += [(entry["example"], variant, desc, c.query, c.should_trigger) for c in cases]
    return rows


def _nll(theta: Any, feats: list[Any], labels: Any) -> float:
    import numpy as np

    total = 0.0
    for scores, y in zip(feats, labels):
        z = theta[0] + theta[1] * scores
        top = max(0.0, float(z.max()))
        log_p = z[0] - top - np.log(np.exp(-top) + np.exp(z - top).sum())  # log P(target fires)
        log_q = np.log1p(-min(float(np.exp(log_p)), 1 - 1e-12))
        total -= float(log_p) if y else float(log_q)
    return total / len(feats)


def _fit_two(feats: list[Any], labels: Any) -> tuple[float, float, float]:
    import numpy as np
    from scipy.optimize import minimize

    res = minimize(_nll, np.array([-2.0, 10.0]), args=(feats, labels), method="BFGS")
    return float(res.x[0]), float(res.x[1]), float(res.fun)


def _accuracy(theta: tuple[float, float], feats: list[Any], labels: Any) -> float:
    from skilleval.backends.embed_features import choice_probabilities

    hits = [(choice_probabilities(list(s), *theta)[0] > 0.5) == bool(y) for s, y in zip(feats, labels)]
    return sum(hits) / len(hits)


def fit(encode: Callable[[list[str]], Any] | None = None, model: str | None = None,
        per_row: bool = False) -> dict[str, Any]:
    """Fit intercept and slope on the calibration set (see the module docstring).

    ``encode`` and ``model`` default to the shipped encoder; another sentence encoder can be
    passed to compare models by the same leave-one-skill-out loss
    (``benchmarks/embed_model_choice.py``). ``per_row`` adds each row's held-out log loss
    (``loso_row_loss``, in calibration-set order) for a paired comparison of encoders."""
    import numpy as np

    from skilleval.backends.embed_features import EXCLUSION_PENALTY, parse, skill_scores
    from skilleval.config import example_distractors
    from skilleval.skills import load_skill

    if encode is None:
        from skilleval.backends.embed_model import MODEL_NAME, shared_encoder

        encode, model = shared_encoder().encode, MODEL_NAME
    rows = calibration_rows()
    raw = {t: encode([t])[0] for t in {r[3] for r in rows}}
    center = np.mean([raw[q] for q in sorted(raw)], axis=0)
    vector = centred_vectors(encode, center)
    distractors = [load_skill(p) for p in example_distractors()]
    others = [parse(d.name, d.description) for d in distractors]
    feats = [np.array(skill_scores([parse(ex, desc), *others], vector(q), vector)[0])
             for ex, _, desc, q, _ in rows]
    labels = np.array([r[4] for r in rows], dtype=bool)
    intercept, slope, loss = _fit_two(feats, labels)
    folds = sorted({r[0] for r in rows})
    cv_loss, cv_acc = [], []
    row_loss = [0.0] * len(rows)
    for held in folds:
        train = [i for i, r in enumerate(rows) if r[0] != held]
        test = [i for i, r in enumerate(rows) if r[0] == held]
        a, b, _ = _fit_two([feats[i] for i in train], labels[train])
        for i in test:
            row_loss[i] = _nll(np.array([a, b]), [feats[i]], labels[[i]])
        cv_loss.append(sum(row_loss[i] for i in test))
        cv_acc.append(_accuracy((a, b), [feats[i] for i in test], labels[test]) * len(test))
    digest = hashlib.sha256(json.dumps([r[1:] for r in rows]).encode()).hexdigest()
    return {
        "model": model,
        "intercept": round(intercept, 6), "slope": round(slope, 6),
        "exclusion_penalty": EXCLUSION_PENALTY,
        "feature": "centred cosine(query, name + description without exclusions), minus the "
                   "penalty times how far an exclusion clause fits better",
        "choice": "softmax over listed skills plus a 'none' option of logit 0",
        "label": "should_trigger (the target skill fired)",
        "method": "maximum likelihood (scipy.optimize BFGS), each query listed with the bundled distractors",
        "data": {
            "set": CALIBRATION_SET.name,
            "examples": folds, "rows": len(rows), "distinct_queries": len({r[3] for r in rows}),
            "positives": int(labels.sum()),
            "variants": ["shipped description", "written description"],
            "per_skill": {f: sum(1 for r in rows if r[0] == f) for f in folds},
            "listed_with": [d.name for d in distractors],
            "disjoint_from": list(ACCEPTANCE_SETS),
            "sha256": digest,
        },
        "in_sample": {"log_loss": round(loss, 6), "accuracy": round(_accuracy((intercept, slope), feats, labels), 4)},
        "leave_one_skill_out": {"log_loss": round(sum(cv_loss) / len(rows), 6),
                                "accuracy": round(sum(cv_acc) / len(rows), 4)},
        "center": [round(float(v), 6) for v in center],
    } | ({"loso_row_loss": row_loss} if per_row else {})


def centred_vectors(encode: Callable[[list[str]], Any], center: Any) -> Callable[[str], Any]:
    """A memoised text -> unit vector with the calibration mean removed."""
    import numpy as np

    @cache
    def vector(text: str) -> Any:
        v = encode([text])[0] - center
        return v / max(float(np.linalg.norm(v)), 1e-12)

    return vector


def main() -> None:
    result = fit()
    CALIBRATION_FILE.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    shown = {k: v for k, v in result.items() if k != "center"}
    print(json.dumps(shown, indent=2))


if __name__ == "__main__":
    main()
