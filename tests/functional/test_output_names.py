"""A model output may have any name, including our bookkeeping names (``transcript.md``,
``metrics.json``): the grader and the blind comparator judge it like any other output."""
from __future__ import annotations

import json
from pathlib import Path

from skilleval.store.catalog import Store

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"
FAST = ("functional.bootstrap=100", "functional.runs=1", "functional.analyze=false")
EXPECTATION = 'The summary in outputs/transcript.md states the "Source encoding"'


def _evals(tmp_path: Path) -> Path:
    evals = {"skill_name": "csv-tidy", "evals": [{
        "id": 1, "name": "summary-named-transcript",
        "prompt": "Please tidy evals/files/contacts.csv: trim every cell and drop blank lines. "
                  "Write the cleaned file to outputs/contacts_clean.csv and a short summary of "
                  "what you did to outputs/transcript.md.",
        "files": ["evals/files/contacts.csv"],
        "expectations": [EXPECTATION]}]}
    path = tmp_path / "evals.json"
    path.write_text(json.dumps(evals))
    return path


def test_grader_sees_an_output_named_transcript_md(skilleval_cli, tmp_path: Path) -> None:
    path = _evals(tmp_path)
    skilleval_cli.run("+experiment=functional_eval", *FAST, f"functional.evals={path}",
                      check=0, timeout=300)
    gradings = sorted(skilleval_cli.outputs.rglob("iteration-*/eval-*/*/run-1/grading.json"))
    assert len(gradings) == 2, gradings
    for g in gradings:
        run = g.parent
        # the model's own transcript.md is kept (under _sandbox/) beside our bookkeeping one
        assert "Source encoding" in (run / "outputs" / "_sandbox" / "outputs" / "transcript.md").read_text()
        exps = json.loads(g.read_text())["expectations"]
        assert [(e["text"], e["passed"]) for e in exps] == [(EXPECTATION, True)], (run, exps)


def test_blind_comparator_sees_an_output_named_transcript_md(skilleval_cli, tmp_path: Path) -> None:
    path = _evals(tmp_path)
    skilleval_cli.run("+experiment=compare", "functional.runs=1", f"functional.evals={path}",
                      "functional.analyze=false", check=0, timeout=300)
    found = sorted(skilleval_cli.outputs.rglob("comparison-1.json"))
    assert len(found) == 1, found
    results = json.loads(found[0].read_text())["expectation_results"]
    assert {side: r["passed"] for side, r in results.items()} == {"A": 1, "B": 1}, results


def test_import_of_our_export_maps_displaced_outputs_back(skilleval_cli, tmp_path: Path) -> None:
    """`skilleval import` of our own workspace lists the model's outputs by their sandbox paths:
    the displaced `_sandbox/outputs/transcript.md` is `outputs/transcript.md` again, and our
    bookkeeping (transcript.md, metrics.json beside the outputs) is not a model output."""
    path = _evals(tmp_path)
    skilleval_cli.run("+experiment=functional_eval", *FAST, f"functional.evals={path}",
                      check=0, timeout=300)
    [ws] = {p.parent for p in skilleval_cli.outputs.rglob("iteration-1")}
    store = tmp_path / "imported"
    skilleval_cli.run("import", str(ws), "--skill", "csv-tidy", env={"SKILLEVAL_STORE": str(store)},
                      check=0)
    rows = Store(store).query("select arm, outputs from executions").to_pylist()
    assert len(rows) == 2, rows
    for r in rows:
        paths = sorted(o["path"] for o in r["outputs"])
        assert paths == ["outputs/contacts_clean.csv", "outputs/transcript.md"], (r["arm"], paths)
