"""`skilleval store compact` / `store stats`: small parts merged into large ones, every row
kept exactly once, at any instant a compaction can be killed, and for concurrent readers."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

from skilleval.store import compact as compact_mod
from skilleval.store.catalog import Store
from skilleval.store.compact import compact
from skilleval.store.writer import PartWriter

SCHEMA = pa.schema([("id", pa.int64()), ("run_id", pa.string()), ("ts", pa.int64())])


def _fill(root: Path, runs: int = 6, parts_per_run: int = 5, rows_per_part: int = 40) -> int:
    """A store with runs × parts small parts of a table `things`; returns the row count."""
    store = Store(root)
    n = 0
    for r in range(runs):
        w = PartWriter(store.location.join("things", f"experiment=e{r % 2}", f"run=r{r}"), SCHEMA,
                       flush_rows=rows_per_part, location=store.location)
        for _ in range(parts_per_run * rows_per_part):
            w.append({"id": n, "run_id": f"r{r}", "ts": n})
            n += 1
        w.close()
    return n


def _ids(root: Path) -> list[int]:
    return Store(root).query("select id from things order by id").column("id").to_pylist()


def _parquets(root: Path) -> list[Path]:
    return sorted(root.rglob("*.parquet"))


def test_compact_after_a_sweep_keeps_every_row_once(skilleval_cli):
    skilleval_cli.run("-m", "+experiment=trigger_eval", "progress=false", "store.flush_rows=4",
                      "skill=${example:changelog-writer},${example:csv-tidy}", timeout=240, check=0)
    every = "select * from {} order by all"
    before = {v: Store(skilleval_cli.store).query(every.format(v)).to_pylist()
              for v in ("trials", "queries", "runs")}
    stats = json.loads(skilleval_cli.run("store", "stats", "--format", "json", check=0).stdout)
    parts_before = {s["view"]: s["parts"] for s in stats}
    assert parts_before["trials"] >= 2 and parts_before["runs"] >= 4  # one job, one part or more
    proc = skilleval_cli.run("store", "compact", "--format", "json", check=0)
    done = {t["table"]: t for t in json.loads(proc.stdout)}
    for view, parts in parts_before.items():
        assert done[view]["merged"] == parts and done[view]["written"] == 1
    after = {v: Store(skilleval_cli.store).query(every.format(v)).to_pylist()
             for v in ("trials", "queries", "runs")}
    assert after == before and after["trials"]  # every row, once, unchanged
    stats = json.loads(skilleval_cli.run("store", "stats", "--format", "json", check=0).stdout)
    assert {s["view"]: s["parts"] for s in stats} == {v: 1 for v in parts_before}
    assert all(s["dead_parts"] == 0 for s in stats)
    # the viewer's and the report's runs index reads the merged part too (it read only each
    # run's own folder: after compaction no earlier run could be opened or reported)
    from skilleval.viewer.runs_index import RunsIndex

    index = RunsIndex(skilleval_cli.store)
    assert sorted({r["run_id"] for r in index.table().to_pylist()}) == sorted({r["run_id"] for r in before["runs"]})
    run_id = before["runs"][0]["run_id"]
    skilleval_cli.run("report", run_id, "-o", str(skilleval_cli.cwd / "r.html"), check=0)
    # a rerun now reads its cache from the compacted part: nothing is called again
    skilleval_cli.run("+experiment=trigger_eval", "progress=false", check=0)
    assert json.loads(skilleval_cli.results()[-1].read_text())["calls"]["made"] == 0


def test_a_compaction_killed_between_writing_and_deleting_loses_and_duplicates_nothing(
        tmp_path, monkeypatch):
    root = tmp_path / "store"
    n = _fill(root)
    calls = []

    def die(self, paths):  # the process dies right after the merged part became visible
        if paths:
            calls.append(paths)
            raise KeyboardInterrupt

    monkeypatch.setattr(type(Store(root).location), "remove", die)
    with pytest.raises(KeyboardInterrupt):
        compact(Store(root).location, target_rows=10_000)
    monkeypatch.undo()
    assert any(p.name.startswith("compact-") for p in _parquets(root))
    assert len(_parquets(root)) > 2  # old parts still on disk ...
    assert _ids(root) == list(range(n))  # ... yet every row is read exactly once
    (root / compact_mod.LOCK_NAME).unlink()  # the dead process's lock (its pid is ours)
    report = compact(Store(root).location, target_rows=10_000)
    assert sum(t.leftovers_removed for t in report.tables) > 0
    assert _ids(root) == list(range(n))


def test_sigkill_at_any_moment_and_concurrent_readers_see_every_row_once(tmp_path):
    root = tmp_path / "store"
    n = _fill(root, runs=8, parts_per_run=8, rows_per_part=25)
    script = ("import sys; from skilleval.store.catalog import Store; "
              "from skilleval.store.compact import compact; "
              "compact(Store(sys.argv[1]).location, target_rows=400, break_lock=True)")
    for delay in (0.3, 0.6, 0.9, 1.2):  # wherever the kill lands, the invariant holds
        proc = subprocess.Popen([sys.executable, "-c", script, str(root)])
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert _ids(root) == list(range(n))
    seen: list[int] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.append(len(_ids(root)))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        compact(Store(root).location, target_rows=400, break_lock=True)
    finally:
        stop.set()
        reader.join()
    assert seen and set(seen) == {n}
    assert _ids(root) == list(range(n))
    assert all(p.name.startswith("compact-") for p in _parquets(root))


def test_a_second_compaction_while_one_runs_is_refused(skilleval_cli):
    skilleval_cli.store.mkdir(parents=True)
    (skilleval_cli.store / compact_mod.LOCK_NAME).write_text("some-other-host 123")
    proc = skilleval_cli.run("store", "compact")
    assert proc.returncode == 2 and "another compaction holds" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_store_that_cannot_be_written_is_one_line(skilleval_cli):
    """compact and import on a read-only store crashed with an OSError traceback (exit 1);
    /sys and /proc/sys refuse new files to every user, root included."""
    r = skilleval_cli.run("store", "compact", "--store", "/sys/kernel")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "not writable" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    ws = skilleval_cli.cwd / "ws"
    ws.mkdir()
    r = skilleval_cli.run("import", str(ws), "--store", "/proc/sys")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "/proc/sys" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_store_without_a_subcommand_says_so_on_stderr(skilleval_cli):
    """It printed its usage on stdout, exit 2, and nothing on stderr."""
    r = skilleval_cli.run("store")
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.strip().startswith("skilleval: error: skilleval store needs a subcommand")
    assert skilleval_cli.run("store", "--help", check=0).stdout.startswith("usage: skilleval store")
