"""`routing` and `attribute` through serve-sim: `backend=anthropic_api` (the real SDK) against the
simulated Messages API on 127.0.0.1. Both runs complete, write results.json, and agree with the
`stub` backend trial by trial (serve-sim runs the stub's model: same draw per trial key), so
every figure they print is the same."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skilleval.sim.process import SimProcess
from skilleval.store.catalog import Store
from tests.conftest import make_cli

REPO = Path(__file__).resolve().parents[2]
ROUTING_SKILLS = [REPO / "experiments" / "changelog-writer", REPO / "experiments" / "csv-tidy",
                  REPO / "experiments" / "distractors" / "xlsx-editor",
                  REPO / "experiments" / "distractors" / "pdf-form-filler"]
ROUTING_CASES = REPO / "experiments" / "routing" / "cases.json"
ATTR_SKILL = REPO / "tests" / "fixtures" / "attribute" / "tidy"
ATTR_CASES = REPO / "experiments" / "csv-tidy" / "evals" / "trigger_eval.json"


def _both(tmp: Path, sim: SimProcess, *args: str) -> tuple[dict[str, Any], ...]:
    out = []
    for name, backend in (("stub", ["backend=stub"]),
                          ("api", ["backend=anthropic_api", f"backend.base_url={sim.url}",
                                   "backend.retry_base_s=0.01", "backend.retry_max_s=0.05"])):
        cli = make_cli(tmp / name)
        r = cli.run(*args, *backend, "backend.model=sim-1", "progress=false",
                    env={"ANTHROPIC_API_KEY": "sk-ant-test"}, timeout=300, check=0)
        [results] = cli.results()
        trials = Store(cli.store).query("select query, repeat, description, outcome, fired "
                                        "from trials order by all").to_pylist()
        summary = json.loads(Store(cli.store).query(
            "select summary_json from runs where status = 'done'").to_pylist()[0]["summary_json"])
        out.append({"stdout": r.stdout, "res": json.loads(results.read_text()), "trials": trials,
                    "summary": summary})
    return tuple(out)


def test_routing_through_serve_sim_agrees_with_the_stub(tmp_path: Path, sim: SimProcess) -> None:
    sim.configure(fail_next=[529, 529])  # retried by the SDK path, never scored
    stub, api = _both(tmp_path, sim, "+experiment=routing",
                      "skills=[" + ",".join(map(str, ROUTING_SKILLS)) + "]",
                      f"cases={ROUTING_CASES}", "trigger.runs=2")
    assert len(api["trials"]) == 2 * len(json.loads(ROUTING_CASES.read_text()))
    assert api["trials"] == stub["trials"]
    for key in ("matrix", "per_skill", "accuracy", "errors"):
        assert api["res"][key] == stub["res"][key], key
    assert api["summary"]["calls_made"] == stub["summary"]["calls_made"] > 0
    assert api["res"]["accuracy"]["n"] == len(api["trials"])  # no errors on either side
    assert "routing confusion matrix" in api["stdout"]


def test_attribute_through_serve_sim_agrees_with_the_stub(tmp_path: Path, sim: SimProcess) -> None:
    stub, api = _both(tmp_path, sim, "+experiment=attribute", f"skill={ATTR_SKILL}",
                      f"cases={ATTR_CASES}", "trigger.runs=2", "attribute.bootstrap=500")
    assert api["trials"] == stub["trials"] and len({t["description"] for t in api["trials"]}) == 8
    assert api["res"] == stub["res"]  # every effect and interval (seeded bootstrap)
    assert api["res"]["ranking"][0] == 0 and api["res"]["coalitions"] == 8
    assert "sentence attribution" in api["stdout"]
