"""Audit of junit.xml for trigger runs: an early-stopped rate is labelled where it is shown.

Under an adaptive policy (trigger.policy=decided) results.json marks each query whose runs
stopped once its verdict was settled (early_stopped: its rate is biased), and the viewer
labels it; junit.xml printed the same rate ("0/2 valid runs triggered") without a word."""
from __future__ import annotations

import json

from junitparser import JUnitXml


def test_junit_labels_exactly_the_early_stopped_rates(skilleval_cli) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=3", "trigger.policy=decided",
                      "progress=false", "reporter=[json,junit]", check=0)
    [res] = skilleval_cli.results()
    stopped = {" ".join(r["query"].split()) for r in json.loads(res.read_text())["results"] if r["early_stopped"]}
    assert stopped, "the decided policy should stop some queries early on the bundled example"
    [path] = list(skilleval_cli.outputs.rglob("junit.xml"))
    suite = next(iter(JUnitXml.fromfile(str(path))))
    labelled = {c.name for c in suite if "(early-stopped)" in (c.system_out or "")}
    assert labelled == stopped
    for c in suite:
        for r in c.result:
            assert ("(early-stopped)" in r.message) == (c.name in stopped), (c.name, r.message)
