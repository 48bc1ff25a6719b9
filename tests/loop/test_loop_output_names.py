"""Audit: a model output whose name is not UTF-8 is recorded like any output.

Its name reached the executions row as a lone surrogate, which the Parquet writer refuses:
the functional run would die at its first store flush, and no output of it be seen."""
from __future__ import annotations

import os
from pathlib import Path

import skilleval.functional.records  # noqa: F401  (registers the table schemas)
from skilleval.execution import collect_outputs, snapshot
from skilleval.store.catalog import Store


def test_collect_outputs_renames_a_non_utf8_name_inside_the_sandbox(tmp_path: Path) -> None:
    sandbox = tmp_path / "sb"
    (sandbox / "outputs").mkdir(parents=True)
    (sandbox / "input.csv").write_text("a\n")
    before = snapshot(sandbox)
    with open(os.path.join(os.fsencode(sandbox / "outputs"), b"r\xe9sum\xe9.txt"), "wb") as fh:
        fh.write(b"model text")
    (sandbox / "outputs" / "r\\xe9sum\\xe9.txt").write_text("another file with the escaped name")
    (sandbox / "outputs" / "ok.txt").write_text("fine")
    outs = {o.path: o for o in collect_outputs(sandbox, before)}
    assert set(outs) == {"outputs/ok.txt", "outputs/r\\xe9sum\\xe9.txt", "outputs/r\\xe9sum\\xe9.txt.1"}
    assert (sandbox / "outputs/r\\xe9sum\\xe9.txt.1").read_bytes() == b"model text"  # nothing overwritten
    assert (sandbox / "outputs/r\\xe9sum\\xe9.txt").read_text() == "another file with the escaped name"
    for o in outs.values():
        o.path.encode("utf-8")
        assert (sandbox / o.path).stat().st_size == o.size
    store = Store(tmp_path / "store")  # the row the runner writes can be written
    with store.writer("executions", "functional_eval", "r1") as w:
        w.write([{"run_id": "r1", "outputs": [{"path": o.path, "sha256": o.sha256, "size": o.size}
                                             for o in outs.values()]}])
    assert store.query("select count(*) as n from executions").to_pylist() == [{"n": 1}]
