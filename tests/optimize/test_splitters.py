from __future__ import annotations

import pytest

from skilleval.domain import TriggerCase
from skilleval.errors import UserError
from skilleval.optimize.splitters import (FixedSplitter, HoldoutParams, HoldoutSplitter, NoSplitter,
                                          StratifiedParams, StratifiedSplitter)


def cases(pos: int, neg: int, split: str | None = None) -> list[TriggerCase]:
    return ([TriggerCase(f"p{i}", f"positive {i}", True, split) for i in range(pos)]
            + [TriggerCase(f"n{i}", f"negative {i}", False, split) for i in range(neg)])


def classes(part) -> tuple[int, int]:
    return sum(c.should_trigger for c in part), sum(not c.should_trigger for c in part)


def test_stratified_default_is_50_25_25_and_covers_both_classes_everywhere():
    s = StratifiedSplitter(StratifiedParams()).split(cases(10, 10))
    assert s.sizes() == {"train": 10, "validation": 5, "test": 5}
    for part in (s.train, s.validation, s.test):
        assert min(classes(part)) >= 1
    ids = [c.id for part in (s.train, s.validation, s.test) for c in part]
    assert sorted(ids) == sorted(c.id for c in cases(10, 10))


def test_stratified_is_deterministic_and_seeded():
    a = StratifiedSplitter(StratifiedParams(seed=1)).split(cases(10, 10))
    b = StratifiedSplitter(StratifiedParams(seed=1)).split(cases(10, 10))
    c = StratifiedSplitter(StratifiedParams(seed=2)).split(cases(10, 10))
    assert a == b
    assert a != c


def test_stratified_uneven_classes_keep_train_populated():
    s = StratifiedSplitter(StratifiedParams()).split(cases(3, 17))
    assert classes(s.train)[0] == 1 and classes(s.validation)[0] == 1 and classes(s.test)[0] == 1


@pytest.mark.parametrize("pos,neg", [(0, 5), (5, 0)])
def test_one_class_is_a_clear_user_error(pos, neg):
    with pytest.raises(UserError, match="only should_trigger"):
        StratifiedSplitter(StratifiedParams()).split(cases(pos, neg))


def test_too_small_class_is_a_clear_user_error():
    with pytest.raises(UserError, match="at least 3 should_trigger=true"):
        StratifiedSplitter(StratifiedParams()).split(cases(2, 10))


def test_holdout_matches_skill_creator_sizes():
    s = HoldoutSplitter(HoldoutParams()).split(cases(10, 10))
    assert s.sizes() == {"train": 12, "validation": 0, "test": 8}
    assert min(classes(s.train)) >= 1


def test_none_and_fixed():
    assert NoSplitter().split(cases(2, 2)).sizes() == {"train": 4, "validation": 0, "test": 0}
    mixed = cases(2, 2, "train") + [TriggerCase("v", "val q", True, "val"),
                                    TriggerCase("t", "test q", False, "test")]
    s = FixedSplitter().split(mixed)
    assert s.sizes() == {"train": 4, "validation": 1, "test": 1}
    with pytest.raises(UserError, match="no 'split' field"):
        FixedSplitter().split(cases(2, 2))
