"""The Runs page's headline of a routing run is the run's routing accuracy (what it printed
and wrote to results.json), not the pass rate of its per-query rows under the same word
("accuracy 70%" beside a printed "routing accuracy: 0.77")."""
from __future__ import annotations

import json
from pathlib import Path

from skilleval.store.catalog import Store
from skilleval.viewer.queries import Queries

EX = Path(__file__).resolve().parents[2] / "experiments"
SKILLS = [EX / "changelog-writer", EX / "csv-tidy", EX / "distractors" / "xlsx-editor",
          EX / "distractors" / "pdf-form-filler"]


def test_routing_run_headline_is_its_routing_accuracy(skilleval_cli) -> None:
    skilleval_cli.run("+experiment=routing", "skills=[" + ",".join(map(str, SKILLS)) + "]",
                      f"cases={EX / 'routing' / 'cases.json'}", "progress=false", check=0)
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    acc = json.loads(path.read_text())["accuracy"]
    [row] = Queries(Store(skilleval_cli.store)).runs()["rows"]
    hd = row["headline"]
    assert hd["label"] == "routing accuracy"
    assert (hd["value"], hd["low"], hd["high"]) == (acc["value"], acc["low"], acc["high"])
