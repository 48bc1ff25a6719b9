"""A functional eval whose evals have no expectation has no pass rate to compare: it printed
n/a everywhere, paid for its executions and exited 0. It is flagged and exits 3 (the outputs
stay in the workspace for a person to look at)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_no_expectation_anywhere_exits_3_and_says_so(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    skill = tmp_path / "csv-tidy"
    shutil.copytree(REPO / "experiments" / "csv-tidy", skill)
    evals = tmp_path / "f.json"
    evals.write_text(json.dumps({"evals": [{
        "id": 1, "prompt": "Clean evals/files/contacts.csv and write outputs/contacts_clean.csv",
        "files": ["evals/files/contacts.csv"], "expectations": []}]}))
    r = skilleval_cli.run("+experiment=functional_eval", f"skill={skill}", f"functional.evals={evals}",
                          "functional.runs=1", "functional.analyze=false", "progress=false", check=3)
    assert "no pass rate in both arms" in r.stderr and "Traceback" not in r.stderr
    bench = [p for p in skilleval_cli.outputs.rglob("benchmark.json") if "workspace" not in p.parts]
    assert json.loads(bench[0].read_text())["flags"]
    assert list(skilleval_cli.outputs.rglob("contacts_clean.csv"))  # there to look at
