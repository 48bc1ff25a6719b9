"""A run on a store of many small parts says why it is slow and what to do about it.

Every run reads the store before its first call, and DuckDB's cost grows with the number of
files: months of use leave one small part per job flush, and runs got seconds slower with
nothing saying why (`Store.compact_hint`)."""
from __future__ import annotations

HINT = "Parquet parts, and every run reads them before its first call; `skilleval store compact`"


def _run(cli, *extra: str) -> str:  # noqa: ANN001
    return cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false", *extra,
                   check=0).stderr


def test_a_run_on_a_store_of_many_parts_points_to_compact(skilleval_cli) -> None:  # noqa: ANN001
    # the first run reads an empty store: nothing to say, whatever the threshold
    assert HINT not in _run(skilleval_cli, "store.compact_hint_parts=3")
    # the second reads the first run's parts (runs, trials, queries: 3 or more)
    err = _run(skilleval_cli, "store.compact_hint_parts=3")
    assert HINT in err and str(skilleval_cli.store) in err
    # the shipped threshold (500) is far from a two-run store; 0 turns the line off
    assert HINT not in _run(skilleval_cli)
    assert HINT not in _run(skilleval_cli, "store.compact_hint_parts=0")
    # four runs left many parts; compaction leaves one per table (four tables), so the same
    # threshold no longer says anything
    assert HINT in _run(skilleval_cli, "store.compact_hint_parts=5")
    skilleval_cli.run("store", "compact", check=0)
    assert HINT not in _run(skilleval_cli, "store.compact_hint_parts=5")


def test_a_sweep_says_it_once(skilleval_cli) -> None:  # noqa: ANN001
    _run(skilleval_cli)  # parts to read
    err = skilleval_cli.run("-m", "+experiment=trigger_eval", "progress=false", "store.compact_hint_parts=3",
                            "trigger.runs=1,2,3", check=0).stderr
    assert err.count(HINT) == 1, err


def test_a_negative_threshold_is_refused_before_any_call(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", "store.compact_hint_parts=-1", check=2)
    assert r.stderr.strip().splitlines() == ["skilleval: error: store.compact_hint_parts must be >= 0, got -1"]
