"""benchmarks/optimizer_efficiency.py --diagnose: each unit's paired difference lands in one
class (kept the original / test check overruled / handed over a candidate; lower, higher or
tie; for a loss, whether ours had evaluated a description as good as skill-creator's), and the
class shares add up to the mean difference."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from optimizer_tables import print_diagnosis


def _row(seed: int, ours: float, sc: float, accepted: int, overruled: bool, cands: list[float]) -> dict:
    return {"example": "x", "seed": seed, "orig": cands[0], "ours0_acc": ours, "ours0_best_acc": ours,
            "sc_acc": sc, "ours0_diag": {"iterations": len(cands) - 1, "exit": "plateau",
                                         "accepted": accepted, "overruled": overruled,
                                         "candidates": [(i, "d", a) for i, a in enumerate(cands)]}}


def test_diagnosis_classes_sum_to_the_mean_difference(capsys) -> None:
    rows = [_row(0, 0.6, 1.0, 0, False, [0.6, 1.0]),   # kept the original, had one as good
            _row(1, 0.6, 0.8, 1, True, [0.6, 0.4]),    # overruled, had none as good
            _row(2, 1.0, 0.8, 1, False, [0.6, 1.0]),   # handed over, higher
            _row(3, 0.8, 0.8, 1, False, [0.6, 0.8])]   # tie
    print_diagnosis(rows, [""])
    out = capsys.readouterr().out
    shares = {line[:60].strip(): float(line[60:]) for line in out.splitlines() if line.startswith("  ")}
    assert shares == {"kept the original, ours lower (had one as good)": -0.1,
                      "test check overruled, ours lower (had none as good)": -0.05,
                      "handed over a candidate, ours higher": 0.05,
                      "handed over a candidate, tie": 0.0}
    assert abs(sum(shares.values()) - (-0.4 - 0.2 + 0.2 + 0.0) / 4) < 1e-9
