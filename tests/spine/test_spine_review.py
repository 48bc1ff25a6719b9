"""Regressions found in review: store paths with glob characters, insufficient queries in
the run-level metrics."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from skilleval.domain import Outcome, TrialResult, TriggerCase
from skilleval.store.catalog import Store
from skilleval.trigger.metrics import summarize
from skilleval.trigger.runner import QueryResult, TriggerSettings


def _write_run(root: Path, run_id: str) -> None:
    store = Store(root)
    w = store.writer("runs", "test", run_id)
    w.write([{"run_id": run_id, "ts": dt.datetime.now(dt.timezone.utc), "status": "done"}])
    w.close()


def test_store_root_with_glob_characters_reads_only_its_own_parts(tmp_path: Path) -> None:
    # `?` would also match the neighbour `pxq`; `[1]` would match nothing at all.
    _write_run(tmp_path / "pxq" / "store", "neighbour")
    for name in ("p?q", "a[1]b", "s*t", "it's"):
        root = tmp_path / name / "store"
        _write_run(root, f"own-{name}")
        rows = Store(root).query("select run_id from runs").to_pylist()
        assert rows == [{"run_id": f"own-{name}"}], name
        assert Store(root).lookup("runs", "run_id", [f"own-{name}"]).num_rows == 1


def _query(i: int, should: bool, outcomes: list[Outcome], s: TriggerSettings) -> QueryResult:
    q = QueryResult(TriggerCase(f"q{i}", f"query {i}", should), "me", s)
    q.results = [TrialResult(f"k{i}-{r}", o, fired="me" if o is Outcome.TRIGGERED else None)
                 for r, o in enumerate(outcomes)]
    return q


def test_insufficient_queries_are_left_out_of_run_metrics_too() -> None:
    s = TriggerSettings(runs=3, min_valid=2)
    T, N, E = Outcome.TRIGGERED, Outcome.NOT_TRIGGERED, Outcome.ERROR
    results = [_query(0, True, [T, T, N], s), _query(1, False, [N, N, N], s),
               _query(2, False, [T, E, E], s)]  # one valid run of 2 needed: insufficient
    summary = summarize(results)
    assert summary.insufficient == 1
    rc = summary.run_confusion
    assert (rc.tp, rc.fp, rc.tn, rc.fn) == (2, 0, 3, 1)
    assert summary.runs["precision"].value == 1.0
    assert summary.valid_trials == 7 and summary.errors == 2  # still counted as trials


def test_sql_json_is_strict_json_and_csv_lists_are_json(skilleval_cli) -> None:  # noqa: ANN001
    import csv
    import io
    import json

    _write_run(skilleval_cli.store, "r1")
    q = "select run_id, 'nan'::double as n, ['a', 'b'] as l from runs"
    out = skilleval_cli.run("sql", q, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout, parse_constant=lambda c: 1 / 0) == \
        [{"run_id": "r1", "n": None, "l": ["a", "b"]}]
    out = skilleval_cli.run("sql", q, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert json.loads(rows[0]["l"]) == ["a", "b"]
