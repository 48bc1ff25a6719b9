"""Issue 8: every number right, every failure said out loud (functional evals)."""
from __future__ import annotations

from collections import Counter

from skilleval.functional.comparator import comparison_file, sign_test_by_eval


def _result(w1: str, w2: str) -> dict:
    order1 = {"winner": "A", "reasoning": "A looked better", "rubric": {}}
    return {"order1": order1, "order1_winner_arm": w1, "order2_winner_arm": w2,
            "winner_arm": w1 if w1 == w2 else "TIE", "consistent": w1 == w2}


def test_comparison_file_says_tie_when_the_orders_disagree() -> None:
    tie = comparison_file(_result("with_skill", "without_skill"), "with_skill", "without_skill")
    assert tie["winner"] == "TIE" and tie["order1_winner"] == "A"
    assert tie["both_orders"]["consistent"] is False
    won = comparison_file(_result("without_skill", "without_skill"), "with_skill", "without_skill")
    assert won["winner"] == "B"


def test_sign_test_counts_evals_not_repeats() -> None:
    # one eval, six repeats all won by the primary: one eval won, not six independent wins
    assert sign_test_by_eval({"e1": Counter(with_skill=6)}, "with_skill", "without_skill") == 1.0
    five = {f"e{i}": Counter(with_skill=2, without_skill=1) for i in range(6)}
    assert abs(sign_test_by_eval(five, "with_skill", "without_skill") - 0.03125) < 1e-9
    split = {"e1": Counter(with_skill=1, without_skill=1), "e2": Counter(TIE=3)}
    assert sign_test_by_eval(split, "with_skill", "without_skill") is None
