"""Item 3: a damaged Parquet part (truncated, zeroed, bit-flipped, garbage, one flipped bit in
a data page) is quarantined with one line naming it; every view keeps working over the rest,
the next run continues and re-pays only the trials the part held; `store check` lists it."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from once_per_run import once_per_run

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "experiments" / "csv-tidy"
RUN = ("+experiment=trigger_eval", "backend=stub", f"skill={SKILL}", "trigger.runs=2",
       "trigger.policy=fixed")


def damage(path: Path, mode: str) -> None:
    b = bytearray(path.read_bytes())
    if mode == "truncated":
        b = b[: len(b) // 2]
    elif mode == "zeroed":
        b = bytearray(len(b))
    elif mode == "bitflipped":
        for i in range(8, len(b) - 8, 13):
            b[i] ^= 0x04
    elif mode == "garbage":
        b = bytearray(os.urandom(len(b)))
    elif mode == "page_bit":  # footer intact: only a page checksum can tell
        b[len(b) // 3] ^= 0x10
    path.write_bytes(bytes(b))


def _sql(cli, query: str) -> list[dict]:
    r = cli.run("sql", query, "--format", "json")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def two_run_store(tmp_path_factory: pytest.TempPathFactory, make_skilleval_cli) -> Path:
    """A store written by two real runs (two trial parts: repeats 0, then 1), made once per
    test run (`once_per_run`: not once per xdist worker); each test damages its own copy
    (`cli_with_two_runs`)."""
    def build(root: Path) -> Path:
        cli = make_skilleval_cli(root)
        cli.run(*RUN, "trigger.runs=1", check=0)
        cli.run(*RUN, check=0)
        return cli.store
    return once_per_run(tmp_path_factory, "corrupt-store-two-runs", build)


@pytest.fixture
def cli_with_two_runs(skilleval_cli, two_run_store: Path):  # noqa: ANN001, ANN201
    shutil.copytree(two_run_store, skilleval_cli.store, symlinks=True)
    return skilleval_cli


@pytest.mark.parametrize("mode", ["truncated", "zeroed", "bitflipped", "garbage", "page_bit"])
def test_damaged_part_is_quarantined_and_work_continues(cli_with_two_runs, canary, mode: str) -> None:
    cli = cli_with_two_runs
    parts = sorted((cli.store / "trials").rglob("*.parquet"), key=lambda p: p.parent.name)
    assert len(parts) >= 2  # a slow machine flushes a run in several parts (store.flush_seconds)
    victim = parts[0]
    import pyarrow.parquet as pq

    lost = pq.read_metadata(victim).num_rows
    total = sum(pq.read_metadata(p).num_rows for p in parts)
    damage(victim, mode)
    check = cli.run("store", "check")
    assert check.returncode == 1 and victim.name in check.stdout and "Traceback" not in check.stderr
    if mode == "page_bit":  # DuckDB decodes the page without a checksum: `store check` moves it
        moved = cli.run("store", "check", "--quarantine")
        assert moved.returncode == 1 and "quarantined to" in moved.stdout

    # one query over both views: the first read of the damaged store (its warning is here)
    r = cli.run("sql", "select (select count(*) from runs) as runs, (select count(*) from trials) "
                "as trials", "--format", "json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    warnings = [ln for ln in r.stderr.splitlines() if "unreadable store part" in ln]
    assert json.loads(r.stdout) == [{"runs": 2, "trials": total - lost}]
    if mode != "page_bit":  # a footer check finds it before any view is read
        assert len(warnings) == 1 and victim.name in warnings[0]
    assert not victim.exists()
    assert list((cli.store / "_quarantine").rglob(victim.name + ".corrupt"))

    again = cli.run(*RUN)
    assert again.returncode == 0, again.stderr
    assert f"backend calls: {lost} new, {total - lost} cached" in again.stdout
    row = _sql(cli, "select count(distinct key) as k from trials")[0]
    assert row["k"] == total
    after = cli.run("store", "check")
    assert after.returncode == 1 and "quarantined part" in after.stdout and "unreadable" not in after.stdout
    canary.assert_untouched()


def test_store_check_on_a_clean_store(cli_with_two_runs) -> None:
    cli = cli_with_two_runs
    r = cli.run("store", "check")
    assert r.returncode == 0 and r.stdout == "" and "0 problem(s)" in r.stderr
    bad = cli.run("store", "nope")
    assert bad.returncode == 2 and "unknown subcommand 'nope'" in bad.stderr


def test_store_check_on_an_object_store_url_says_so(skilleval_cli) -> None:
    """It once read `s3://b/p` as a local path and answered 'store not found: s3:/b/p'."""
    r = skilleval_cli.run("store", "check", "--store", "s3://bucket/prefix", check=2)
    assert r.stderr.strip().splitlines() == [
        "skilleval: error: --store s3://bucket/prefix: `store check` reads a local store only"]
