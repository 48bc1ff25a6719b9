"""How the `embed` backend turns cosine similarity into a trigger probability, and its fit.

The model: for a query and a listing, every listed skill gets the cosine similarity ``s``
between the query's embedding and the embedding of ``"<name words>: <description>"``.
The best similarity decides *whether* a skill fires,
``p = 1 / (1 + exp(-(intercept + slope * best)))``, and a softmax over the similarities with
``temperature`` decides *which* one (a close competitor sometimes wins).

``intercept`` and ``slope`` come from a logistic regression (maximum likelihood, scipy's
BFGS) of ``should_trigger`` on the target skill's similarity, over every query of the
bundled examples' eval sets (``experiments/*/evals/trigger_eval.json``). The fit, with the
data it used and its in-sample log loss, ships as ``embed_calibration.json``; the backend's
identity (and so every run summary and trial key) carries the coefficients. Refit with
``python -m skilleval.backends.embed_calibration`` after changing the examples.

Note: those examples are then in-sample for the calibration (two coefficients, ~40 queries);
an honest check is a skill the fit never saw (``tests/fixtures/embed/``).
"""
from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

CALIBRATION_FILE = Path(__file__).with_name("embed_calibration.json")
TEMPERATURE = 0.03  # softmax temperature over cosine similarities (a 0.1 gap: ~4 % to the rival)


def skill_text(name: str, description: str) -> str:
    """What is embedded for a listed skill: its name (hyphens as spaces) and description."""
    return f"{name.replace('-', ' ').replace('_', ' ')}: {description}"


def load_calibration(path: Path = CALIBRATION_FILE) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _labelled_examples() -> list[tuple[str, str, str, bool]]:
    """(example, skill text, query, should_trigger) for every bundled example eval set."""
    from skilleval.datasets import load_trigger_cases
    from skilleval.skills import load_skill

    root = Path(str(resources.files("skilleval.examples")))
    rows = []
    for folder in sorted(p for p in root.iterdir() if (p / "evals" / "trigger_eval.json").is_file()):
        skill = load_skill(folder)
        text = skill_text(skill.name, skill.description)
        for case in load_trigger_cases(folder / "evals" / "trigger_eval.json"):
            rows.append((folder.name, text, case.query, case.should_trigger))
    return rows


def fit() -> dict[str, Any]:
    """Fit intercept and slope on the bundled examples (see the module docstring)."""
    import numpy as np
    from scipy.optimize import minimize

    from skilleval.backends.embed_model import MODEL_NAME, shared_encoder

    rows = _labelled_examples()
    enc = shared_encoder()
    x = np.array([float(enc.encode([q])[0] @ enc.encode([t])[0]) for _, t, q, _ in rows])
    y = np.array([1.0 if label else 0.0 for *_, label in rows])

    def loss(theta: np.ndarray) -> float:
        z = theta[0] + theta[1] * x
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    res = minimize(loss, np.array([0.0, 1.0]), method="BFGS")
    intercept, slope = (float(v) for v in res.x)
    digest = hashlib.sha256(json.dumps([[r[1], r[2], r[3]] for r in rows]).encode()).hexdigest()
    examples = sorted({r[0] for r in rows})
    return {
        "model": MODEL_NAME,
        "intercept": round(intercept, 6), "slope": round(slope, 6), "temperature": TEMPERATURE,
        "feature": "cosine(query, target skill text)", "label": "should_trigger",
        "method": "logistic regression, maximum likelihood (scipy.optimize BFGS)",
        "data": {
            "examples": examples, "queries": len(rows), "positives": int(y.sum()),
            "sha256": digest,
            "per_example": {e: sum(1 for r in rows if r[0] == e) for e in examples},
        },
        "log_loss": round(float(res.fun), 6),
    }


def main() -> None:
    result = fit()
    CALIBRATION_FILE.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
