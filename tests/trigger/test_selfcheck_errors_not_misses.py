"""The self-check judges each control on its *valid* runs. A positive control whose one valid
run triggered and whose other runs errored used to fail as "triggered in 1/3 runs": the
errors counted as "did not trigger", so a flaky API stopped a run with a false harness
alarm. A control with no valid run at all still fails, and says every run errored."""
from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from skilleval.backends.stub import StubBackend, StubParams
from skilleval.domain import Outcome
from skilleval.errors import HarnessError
from skilleval.skills import load_skill
from skilleval.trigger import selfcheck

REPO = Path(__file__).resolve().parents[2]
RATE = 0.6


def _controls(skill, seed: int):  # noqa: ANN001, ANN202
    """The real stub's control outcomes under `seed` (its faults are fixed by seed and key)."""
    backend = StubBackend(StubParams(error_rate=RATE, fault_seed=seed, max_retries=0))
    pos = selfcheck._trials(skill, [], selfcheck.positive_query(skill), "positive", backend)
    neg = selfcheck._trials(skill, [], selfcheck.NEGATIVE_QUERY, "negative", backend)

    async def run_all():  # noqa: ANN202
        return await asyncio.gather(*(backend.run_trial(t) for t in pos + neg))

    results = asyncio.run(run_all())
    return [r.outcome for r in results[:3]], [r.outcome for r in results[3:]]


def _seed(skill, want) -> int:  # noqa: ANN001
    for seed in range(500):
        pos, neg = _controls(skill, seed)
        if want(pos, neg):
            return seed
    pytest.fail("no fault_seed in 0..499 gives the wanted control outcomes")


def test_errors_in_a_control_are_not_misses(tmp_path: Path) -> None:
    """In-process: the CLI runs the self-check for real backends only (the stub needs none),
    and only the stub's faults can be placed on chosen control runs."""
    folder = tmp_path / "changelog-writer"
    shutil.copytree(REPO / "experiments" / "changelog-writer", folder)
    skill = load_skill(folder)
    # one valid positive run that triggered, two errors; negatives all valid and quiet
    seed = _seed(skill, lambda pos, neg: pos.count(Outcome.TRIGGERED) == 1 and pos.count(Outcome.ERROR) == 2
                 and neg.count(Outcome.NOT_TRIGGERED) == 3)
    backend = StubBackend(StubParams(error_rate=RATE, fault_seed=seed, max_retries=0))
    assert asyncio.run(selfcheck.self_check(backend, skill, [])) == 6  # passed; 6 controls sent


def test_a_control_with_no_valid_run_still_fails_and_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "changelog-writer"
    shutil.copytree(REPO / "experiments" / "changelog-writer", folder)
    skill = load_skill(folder)
    seed = _seed(skill, lambda pos, neg: pos.count(Outcome.ERROR) == 3 and Outcome.NOT_TRIGGERED in neg)
    backend = StubBackend(StubParams(error_rate=RATE, fault_seed=seed, max_retries=0))
    with pytest.raises(HarnessError, match="positive control: .*every one of its 3 runs errored"):
        asyncio.run(selfcheck.self_check(backend, skill, []))
