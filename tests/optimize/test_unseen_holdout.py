"""benchmarks/optimizer_efficiency.py --unseen K: the K queries held out from both protocols
are disjoint from what they run on, stratified, fixed by the seed alone, and leave the split
of the remaining queries the same whether read in memory (skill-creator's protocol) or from
the file trigger_opt is given."""
from __future__ import annotations

import sys
from pathlib import Path

from skilleval.datasets import dump_trigger_cases, load_trigger_cases
from skilleval.optimize.splitters import StratifiedParams, StratifiedSplitter

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from optimizer_efficiency import EXAMPLES, hold_out


def _cases(example: str):
    return load_trigger_cases(REPO / "experiments" / example / "evals" / "trigger_eval.json")


def test_hold_out_is_disjoint_stratified_and_seeded(tmp_path: Path) -> None:
    for example in EXAMPLES:
        cases = _cases(example)
        assert hold_out(cases, 0, 7) == (cases, [])
        picks = set()
        for seed in range(4):
            remaining, unseen = hold_out(cases, 4, seed)
            assert (remaining, unseen) == hold_out(cases, 4, seed)  # deterministic
            assert not {c.id for c in remaining} & {c.id for c in unseen}
            assert [c for c in cases if c in remaining] == remaining  # order kept
            assert len(remaining) + len(unseen) == len(cases)
            assert sum(c.should_trigger for c in unseen) == 2  # 10/10 sets: 2 of each class
            picks.add(tuple(c.id for c in unseen))
            # trigger_opt reads the file; skill-creator's protocol splits the list: same split
            path = tmp_path / f"{example}-{seed}.json"
            dump_trigger_cases(remaining, path)
            splitter = StratifiedSplitter(StratifiedParams(seed=seed))
            assert splitter.split(load_trigger_cases(path)) == splitter.split(remaining)
        assert len(picks) > 1, example  # the seed, not a constant, chooses them
