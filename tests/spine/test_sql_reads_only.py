"""`skilleval sql` runs one query that only reads. It ran anything DuckDB takes: a COPY ... TO
one of the store's own Parquet parts replaced it (620 of 2,319 trials gone, exit 0), DROP VIEW
printed "Success" (nothing changed), ATTACH made a database file."""
from __future__ import annotations

from pathlib import Path

from shared_helpers import one_line_error


def count(cli) -> int:  # noqa: ANN001
    r = cli.run("sql", "select count(*) as n from trials_all", "--format", "csv")
    return int(r.stdout.splitlines()[1])


def test_statements_that_write_are_refused_and_the_store_keeps_its_rows(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    cli = skilleval_cli
    cli.run("+experiment=trigger_eval", "backend=stub", "trigger.runs=1", "progress=false")
    before = count(cli)
    part = next((cli.store / "trials").rglob("*.parquet"))
    attached = tmp_path / "side.duckdb"
    for sql, words in ((f"copy (select * from trials_all where 1=0) to '{part}' (format parquet)", "COPY is not a query"),
                       ("drop view trials", "DROP is not a query"),
                       (f"attach '{attached}' as side", "ATTACH is not a query"),
                       ("create table t as select 1", "CREATE is not a query"),
                       ("set threads = 1", "SET is not a query"),
                       ("select 1; select 2", "2 statements"),
                       ("pivot (select 1 as a) on a", "PIVOT without an IN list")):
        line = one_line_error(cli.run("sql", sql, check=None), 2)
        assert words in line, line
    assert count(cli) == before > 0 and not attached.exists()
    for sql in ("with t as (select 1 as x) select * from t", "from trials limit 1", "describe trials",
                "explain select 1", "select * from (select 1 as k, 2 as v) pivot (sum(v) for k in (1))"):
        assert cli.run("sql", sql, check=None).returncode == 0, sql
