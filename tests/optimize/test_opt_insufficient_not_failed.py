"""trigger_opt under errors: a query with too few valid runs is 'insufficient', never a
failure, in every count it prints or stores (split scores, history totals, the test block,
the flips list, the paired test) and too many errors are exit 3 as in trigger_eval.

Seen at backend.error_rate=0.7: the test row read "3/5 100% [44%, 100%]" (3 passed of 5,
the accuracy over the 3 measured), the train row counted errored queries as failed, and
"fixed test should trigger 0/0 -> 1/1" listed a query that was never measured as a win.
"""
from __future__ import annotations

import json

import pytest

ARGS = ("+experiment=trigger_opt", "progress=false", "backend.max_retries=0",
        "trigger.self_check=false", "trigger.min_valid=2")


@pytest.fixture(scope="module")
def errored(make_skilleval_cli, tmp_path_factory):  # noqa: ANN001, ANN201
    cli = make_skilleval_cli(tmp_path_factory.mktemp("opt-errors"))
    r = cli.run(*ARGS, "backend.error_rate=0.3", check=0)
    [path] = list(cli.outputs.rglob("results.json"))
    return r, json.loads(path.read_text())


def test_history_counts_leave_insufficient_queries_out(errored) -> None:  # noqa: ANN001
    _, res = errored
    some = 0
    for h in res["history"]:
        rows = h["train_results"]
        judged = [x for x in rows if not x["insufficient"]]
        some += len(rows) - len(judged)
        assert h["train_total"] == h["total"] == len(judged)
        assert h["train_passed"] + h["train_failed"] == len(judged)
        assert h["train_insufficient"] == len(rows) - len(judged)
        assert all(x["pass"] is None for x in rows if x["insufficient"])
    assert some > 0, "the run should have insufficient queries"


def test_test_block_score_and_accuracy_agree(errored) -> None:  # noqa: ANN001
    _, res = errored
    for side in ("original", "best"):
        block = res["test"][side]
        k, n = (int(x) for x in block["score"].split("/"))
        assert (k, n) == (block["accuracy"]["k"], block["accuracy"]["n"])
        assert block["total"] + block["insufficient"] == len(block["results"])


def test_no_unmeasured_query_is_listed_as_flipped() -> None:
    """An insufficient query (0/0 valid runs) under the original and a pass under the best
    is no "fixed" query: it was never measured before."""
    from types import SimpleNamespace

    from skilleval.optimize.report import _flips
    from skilleval.optimize.selection import QueryOutcome

    def out(cid: str, t: int, v: int, ok: bool, short: bool = False) -> QueryOutcome:
        return QueryOutcome(cid, True, t, v, ok, short, errors=3 - v)

    orig = SimpleNamespace(train=[out("a", 0, 0, False, True), out("b", 0, 3, False)], validation=[])
    best = SimpleNamespace(train=[out("a", 3, 3, True), out("b", 3, 3, True)], validation=[])
    o = SimpleNamespace(by_id={"a": SimpleNamespace(query="qa"), "b": SimpleNamespace(query="qb")})
    flips = _flips(o, SimpleNamespace(best=best, original=orig), {})
    assert [(f[1], f[3], f[4]) for f in flips] == [("qb", "0/3", "3/3")]


def test_too_many_errors_is_exit_3(skilleval_cli) -> None:
    r = skilleval_cli.run(*ARGS, "backend.error_rate=0.8", check=3)
    assert "max_error_rate" in r.stderr
