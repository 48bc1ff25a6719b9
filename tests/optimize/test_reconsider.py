"""``optimize.reconsider_alpha``: a loop that kept the original tries its fully evaluated
candidates against it once more, on the paired train + validation test at a looser alpha
(`selection.reconsider`, `Optimizer._reconsider`)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from opt_helpers import REPO
from skilleval.optimize.loop import Optimizer
from skilleval.optimize.plan import OptimizeSettings
from skilleval.optimize.selection import QueryOutcome, reconsider
from skilleval.optimize.state import Entry, LoopState


def outs(verdicts: str, prefix: str = "q") -> list[QueryOutcome]:
    """One should-trigger query per character: '1' passed (3/3 runs), '0' failed (0/3)."""
    return [QueryOutcome(f"{prefix}{i}", True, 3 * (v == "1"), 3, v == "1")
            for i, v in enumerate(verdicts)]


ORIG = (outs("1111100000", "t"), outs("00000", "v"))           # 5 of 15
PLUS4_MINUS1 = (outs("0111111100", "t"), outs("10000", "v"))   # +4/-1 vs ORIG (mid-p 0.109): 8 of 15
PLUS5_MINUS1 = (outs("0111111110", "t"), outs("10000", "v"))   # +5/-1 (0.0625): 9 of 15
PLUS3_MINUS0 = (outs("1111111100", "t"), outs("00000", "v"))   # +3/-0 (0.0625): 8 of 15
PLUS7_MINUS3 = (outs("0001111111", "t"), outs("11000", "v"))   # +7/-3 (0.113): 9 of 15


def test_a_plus4_minus1_candidate_replaces_the_original_at_0_2_not_at_0_1() -> None:
    # mid-p of +4/-1 is 0.109: short of the loop's 0.1, inside 0.2
    assert reconsider(ORIG, [PLUS4_MINUS1], alpha=0.1) is None
    pick = reconsider(ORIG, [PLUS4_MINUS1], alpha=0.2)
    assert pick is not None and pick[0] == 0 and (pick[1].wins, pick[1].losses) == (4, 1)


def test_of_the_winners_the_one_passing_most_train_and_validation_queries_replaces_it() -> None:
    pick = reconsider(ORIG, [PLUS3_MINUS0, PLUS5_MINUS1, PLUS4_MINUS1], alpha=0.2)
    assert pick is not None and pick[0] == 1
    # equal counts: the earlier one
    pick = reconsider(ORIG, [PLUS4_MINUS1, PLUS3_MINUS0], alpha=0.2)
    assert pick is not None and pick[0] == 0


def test_a_contender_with_more_passes_that_loses_its_paired_test_is_not_chosen() -> None:
    # 9 of 15 at +7/-3 (mid-p 0.113) vs 8 of 15 at +3/-0 (0.0625): at 0.1 only +3/-0 wins
    pick = reconsider(ORIG, [PLUS7_MINUS3, PLUS3_MINUS0], alpha=0.1)
    assert pick is not None and pick[0] == 1, pick


def _optimizer(entries: list[Entry], alpha: float | None) -> tuple[Optimizer, LoopState, list]:
    o = Optimizer.__new__(Optimizer)
    o.opt = OptimizeSettings(reconsider_alpha=alpha)
    saved: list = []
    o.states = SimpleNamespace(checkpoint=lambda state, new: saved.append(state.incumbent))
    o.console = SimpleNamespace(print=lambda *a, **k: None)
    return o, LoopState("k", entries=entries), saved


def _entries() -> list[Entry]:
    return [Entry(0, 0, "orig", "original", *ORIG, decision="original"),
            # would win by most (+5/-1) but only has the screen's run per query
            Entry(1, 1, "screened", "llm", *PLUS5_MINUS1, decision="rejected on the screen",
                  screened=True),
            Entry(2, 1, "full", "llm", *PLUS4_MINUS1,
                  decision="rejected: no significant paired win")]


def test_the_loop_reconsiders_fully_evaluated_candidates_only_and_marks_the_pick_accepted() -> None:
    o, state, saved = _optimizer(_entries(), 0.2)
    o._reconsider(state)
    assert state.best.description == "full" and saved == [2]
    # optimize.apply writes only an accepted best (apply.refusal)
    assert state.best.decision.startswith("accepted after the loop (+4/-1")


@pytest.mark.parametrize("alpha", [None, 0.1])
def test_off_or_too_strict_keeps_the_original(alpha: float | None) -> None:
    o, state, saved = _optimizer(_entries(), alpha)
    o._reconsider(state)
    assert state.best.description == "orig" and saved == []


def test_a_loop_that_replaced_the_original_keeps_its_choice() -> None:
    entries = _entries()
    entries.append(Entry(3, 1, "accepted", "llm", *PLUS3_MINUS0, decision="accepted (...)"))
    o, state, saved = _optimizer(entries, 0.2)
    state.incumbent = 3
    o._reconsider(state)
    assert state.best.description == "accepted" and saved == []


def test_end_to_end_on_a_development_seed_where_the_loop_keeps_the_original(cli) -> None:
    """meeting-minutes, split seed 404, sim-404 (a development seed of
    benchmarks/optimizer_efficiency.py): no candidate wins its round's test at 0.1, so the
    loop keeps the original; reconsidered at 0.2, a candidate replaces it, and it passes the
    held-out check. Two candidates were screened out: the flag is stored with the state."""
    common = ("+experiment=trigger_opt", f"skill={REPO / 'experiments' / 'meeting-minutes'}",
              "splitter.seed=404", "backend.model=sim-404", "distractors=${example_distractors:}")
    out = cli.run(*common, "optimize.reconsider_alpha=null")
    assert out.returncode == 0, out.stderr
    off = cli.results()[-1]
    assert off["best_description"] == off["original_description"]
    out = cli.run(*common)  # the shipped default: 0.2
    assert out.returncode == 0, out.stderr
    on = cli.results()[-1]
    assert on["best_description"] != on["original_description"]
    assert on["recommended"]["which"] == "best" and on["selection"]["reconsider_alpha"] == 0.2
    [chosen] = [h for h in on["history"] if h["description"] == on["best_description"]]
    assert chosen["decision"].startswith("accepted after the loop")
    state = json.loads(cli.sql("select state_json from candidates where role = 'iteration' "
                               "order by ts desc limit 1")[0]["state_json"])
    flags = [(e["screened"], "rejected on the screen" in e["decision"]) for e in state["entries"]]
    assert flags.count((True, True)) == 2 and all(a == b for a, b in flags), flags
