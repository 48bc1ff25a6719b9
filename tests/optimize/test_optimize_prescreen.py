"""`optimize.prescreen=embed`: the free proxy ranks proposals; only the top go to the backend."""
from __future__ import annotations

import json


def _summary(cli) -> dict:  # noqa: ANN001
    rows = json.loads(cli.run("sql", "select summary_json from runs where status='done'",
                              "--format", "json", check=0).stdout)
    return json.loads(rows[-1]["summary_json"])


def _descriptions_paid(cli) -> int:  # noqa: ANN001
    rows = json.loads(cli.run("sql", "select count(distinct description) as n, "
                              "count(distinct backend) as b, min(backend) as name from trials",
                              "--format", "json", check=0).stdout)
    assert rows[0]["b"] == 1 and rows[0]["name"] == "stub"  # proxy trials never enter the store
    return rows[0]["n"]


def test_prescreen_sends_only_the_top_candidate_to_the_backend(skilleval_cli) -> None:
    skilleval_cli.run("+experiment=trigger_opt", "progress=false", "optimize.prescreen=embed",
                      "optimize.max_iterations=2", "optimize.patience=2",
                      "optimize.candidates=3", check=0)  # the default is one: nothing to rank
    s = _summary(skilleval_cli)
    its = s["prescreen"]["iterations"]
    assert its and all(i["kept"] == 1 and i["proposed"] > 1 for i in its)
    assert s["prescreen"]["dropped"] == sum(i["proposed"] - 1 for i in its)
    # original + one kept candidate per iteration (+ nothing else) were evaluated on the stub
    assert _descriptions_paid(skilleval_cli) <= 1 + len(its)


def test_unknown_prescreen_backend_is_bad_input(skilleval_cli) -> None:
    r = skilleval_cli.run("+experiment=trigger_opt", "progress=false", "optimize.prescreen=nope",
                          check=2)
    assert "nope" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_paid_prescreen_backend_is_bad_input(skilleval_cli) -> None:
    """optimize.prescreen=anthropic_api was accepted: its calls were in neither the plan nor the
    budget, it got none of backend.* (base_url, retries), and offline it hung."""
    r = skilleval_cli.run("+experiment=trigger_opt", "progress=false", "optimize.prescreen=anthropic_api",
                          "optimize.candidates=3", check=2, env={"ANTHROPIC_API_KEY": "FAKEKEYFORTESTS"})
    assert "free local backend" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
