"""Issue 11: `skilleval diff`, gates and the JUnit / Markdown reporters, through the real CLI
on real stores (stub backend: the simulated model, offline)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import xmlschema
from scipy.stats import binomtest

from skilleval.stats import mcnemar_exact, paired_diff_interval

REPO = Path(__file__).resolve().parents[2]
XSD = Path(__file__).with_name("junit.xsd")
BETTER = ("Writes and updates CHANGELOG.md entries and release notes from git history, commits, "
          "merged pull requests and version tags. Use when the user asks for a changelog, release "
          "notes, or what changed since a version.")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, make_skilleval_cli):  # noqa: ANN001, ANN201
    """A store with two trigger_eval runs of one skill that differ only in its description."""
    root = tmp_path_factory.mktemp("diff")
    cli = make_skilleval_cli(root)
    skill = root / "changelog-writer"
    shutil.copytree(REPO / "experiments" / "changelog-writer", skill)
    cases = skill / "evals" / "trigger_eval.json"
    common = ["+experiment=trigger_eval", f"cases={cases}", "trigger.runs=2",
              "distractors=${example_distractors:}", "reporter=[json,junit,markdown]"]
    cli.run(*common, f"skill={skill}", check=0)
    text = (skill / "SKILL.md").read_text()
    lines = text.splitlines()
    lines[[i for i, ln in enumerate(lines) if ln.startswith("description:")][0]] = f"description: {BETTER}"
    (skill / "SKILL.md").write_text("\n".join(lines) + "\n")
    cli.run(*common, f"skill={skill}", check=0)
    a, b = cli.results()
    return cli, a, b, common, skill


def _passes(path: Path) -> dict[str, bool]:
    return {r["query"]: r["pass"] for r in json.loads(path.read_text())["results"]}


def test_mcnemar_exact_matches_scipy() -> None:
    for b, c in [(0, 0), (0, 1), (1, 6), (6, 1), (3, 3), (10, 2), (0, 12), (25, 14)]:
        ref = binomtest(b, b + c, 0.5, alternative="two-sided").pvalue if b + c else 1.0
        assert mcnemar_exact(b, c) == pytest.approx(ref, abs=1e-12)


def test_paired_interval_keeps_its_level() -> None:
    """Tango's interval: no flips still leaves room; simulated coverage is near 95%."""
    import numpy as np

    d, lo, hi = paired_diff_interval(10, 0, 0, 10)
    assert d == 0 and lo < -0.1 and hi > 0.1
    rng = np.random.default_rng(1)
    probs = np.array([0.55, 0.1, 0.2, 0.15])  # both, before only, after only, neither
    true = probs[2] - probs[1]
    hits = 0
    for _ in range(1500):
        cells = rng.multinomial(30, probs)
        _, lo, hi = paired_diff_interval(*map(int, cells))
        hits += lo <= true <= hi
    assert hits / 1500 > 0.93


def test_diff_lists_exactly_the_flipped_queries(two_runs) -> None:  # noqa: ANN001
    cli, a, b, *_ = two_runs
    pa, pb = _passes(a), _passes(b)
    want_fixed = {q for q in pa if not pa[q] and pb[q]}
    want_regressed = {q for q in pa if pa[q] and not pb[q]}
    assert want_fixed, "the better description should fix some queries"
    out = json.loads(cli.run("diff", "latest~1", "latest", "--format", "json", check=0).stdout)
    assert {r["query"] for r in out["flipped"]["fixed"]} == want_fixed
    assert {r["query"] for r in out["flipped"]["regressed"]} == want_regressed
    for r in out["flipped"]["fixed"]:
        assert r["before"]["verdict"] == "fail" and r["after"]["verdict"] == "pass"
        assert r["before"]["rate"] is not None and r["after"]["rate"] is not None
    b_, c_ = len(want_regressed), len(want_fixed)
    assert out["mcnemar"]["p_value"] == pytest.approx(binomtest(c_, b_ + c_, 0.5).pvalue, abs=1e-6)
    acc = out["deltas"]["accuracy"]
    assert acc["delta"] == pytest.approx((c_ - b_) / len(pa), abs=1e-4)
    assert acc["low"] <= acc["delta"] <= acc["high"]
    # the same diff from the two results.json files, and the table names the flips
    files = json.loads(cli.run("diff", str(a), str(b), "--format", "json", check=0).stdout)
    assert files["flipped"] == out["flipped"]
    table = cli.run("diff", "latest~1", "latest", check=0).stdout
    assert "exact McNemar" in table and f"{c_} fixed" in table


def test_diff_refuses_different_eval_sets_unless_common(two_runs, tmp_path) -> None:  # noqa: ANN001
    cli, a, b, *_ = two_runs
    doc = json.loads(b.read_text())
    doc["results"] = doc["results"][:-3]
    short = tmp_path / "short.json"
    short.write_text(json.dumps(doc))
    r = cli.run("diff", str(a), str(short), check=2)
    assert r.stderr.count("\n") == 1 and "--common" in r.stderr and "Traceback" not in r.stderr
    assert "over different queries (0 only in A" in r.stderr or "over different queries (3 only in A" in r.stderr, r.stderr
    out = json.loads(cli.run("diff", str(a), str(short), "--common", "--format", "json", check=0).stdout)
    assert out["compared"] == len(doc["results"])
    assert any("17 shared queries" in n for n in out["notes"])


def test_diff_reads_skill_creator_results(two_runs, tmp_path) -> None:  # noqa: ANN001
    """run_eval.py's output: no valid_runs or verdicts, errors folded into 'runs'."""
    cli, a, b, *_ = two_runs
    sc = []
    for path in (a, b):
        doc = json.loads(path.read_text())
        slim = {"skill_name": doc["skill_name"], "description": doc["description"],
                "results": [{k: r[k] for k in ("query", "should_trigger", "trigger_rate", "triggers",
                                               "runs", "pass")} for r in doc["results"]],
                "summary": {k: doc["summary"][k] for k in ("total", "passed", "failed")}}
        sc.append(tmp_path / f"{path.parent.name}.json")
        sc[-1].write_text(json.dumps(slim))
    out = json.loads(cli.run("diff", str(sc[0]), str(sc[1]), "--format", "json", check=0).stdout)
    pa, pb = _passes(a), _passes(b)
    assert {r["query"] for r in out["flipped"]["fixed"]} == {q for q in pa if not pa[q] and pb[q]}
    assert any("skill-creator" in n for n in out["notes"])


def test_diff_bad_inputs_exit_2(two_runs, tmp_path) -> None:  # noqa: ANN001
    cli, *_ = two_runs
    for args in (["diff", "nope-run", "latest"], ["diff", "latest~99", "latest"],
                 ["diff", str(tmp_path / "missing.json"), "latest"]):
        r = cli.run(*args, check=2)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_diff_sweep_dispatch_reports_missing_module(monkeypatch) -> None:  # noqa: ANN001
    import sys

    from skilleval.errors import UserError
    from skilleval.rundiff.cli import diff_main

    monkeypatch.setitem(sys.modules, "skilleval.variants.summary", None)
    with pytest.raises(UserError, match="--sweep"):
        diff_main(["--sweep", "abc"])


def test_functional_diff_pairs_by_eval(tmp_path, skilleval_cli) -> None:  # noqa: ANN001
    def bench(rates: dict[str, dict[str, list[float]]]) -> dict:
        runs = [{"eval_id": i, "eval_name": ev, "configuration": arm, "run_number": k + 1,
                 "result": {"pass_rate": v}}
                for arm, evs in rates.items() for i, (ev, vals) in enumerate(evs.items())
                for k, v in enumerate(vals)]
        return {"metadata": {"skill_name": "s"}, "runs": runs}
    a = {"with_skill": {"e1": [0.5, 0.5], "e2": [1.0, 1.0], "e3": [0.0, 0.5]},
         "without_skill": {"e1": [0.0, 0.0], "e2": [0.5, 0.5], "e3": [0.0, 0.0]}}
    b = {"with_skill": {"e1": [1.0, 1.0], "e2": [1.0, 1.0], "e3": [0.5, 0.5]},
         "without_skill": {"e1": [0.0, 0.0], "e2": [0.5, 0.5], "e3": [0.0, 0.0]}}
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(bench(a)))
    pb.write_text(json.dumps(bench(b)))
    out = json.loads(skilleval_cli.run("diff", str(pa), str(pb), "--format", "json", check=0).stdout)
    ws = {r["eval"]: r["delta"] for r in out["arms"]["with_skill"]["per_eval"]}
    assert ws == {"e1": 0.5, "e2": 0.0, "e3": 0.25}
    assert out["arms"]["with_skill"]["pass_rate"]["delta"] == pytest.approx(0.25, abs=1e-4)
    assert out["arms"]["without_skill"]["pass_rate"]["delta"] == 0
    del b["with_skill"]["e3"], b["without_skill"]["e3"]
    pb.write_text(json.dumps(bench(b)))
    r = skilleval_cli.run("diff", str(pa), str(pb), check=2)
    assert "different evals" in r.stderr


def test_gate_below_measured_recall_passes_above_fails(two_runs) -> None:  # noqa: ANN001
    cli, _, b, common, skill = two_runs
    recall = json.loads(b.read_text())["metrics"]["queries"]["recall"]["value"]
    assert 0.1 < recall < 0.95
    cli.run(*common, f"skill={skill}", f"gate.min_recall={recall - 0.05:.3f}", check=0)
    r = cli.run(*common, f"skill={skill}", f"gate.min_recall={recall + 0.05:g}", check=1)
    failed = [ln for ln in r.stderr.splitlines() if "gate" in ln]
    assert len(failed) == 1, r.stderr
    assert "recall" in failed[0] and f"{recall:.3f}" in failed[0] and f">= {recall + 0.05:g}" in failed[0]
    # on=lower tests the interval's lower bound: the same point gate now fails
    cli.run(*common, f"skill={skill}", f"gate.min_recall={recall - 0.05:.3f}", "gate.on=lower", check=1)


def test_gate_baseline_regression_and_bad_gate_keys(two_runs, tmp_path) -> None:  # noqa: ANN001
    cli, a, _, common, skill = two_runs
    old = tmp_path / "old-skill"
    shutil.copytree(skill, old)
    old_md = (REPO / "experiments" / "changelog-writer" / "SKILL.md").read_text()
    (old / "SKILL.md").write_text(old_md)
    # back to the weak description, gated against the latest (good) run of the same skill name
    r = cli.run(*common, f"skill={old}", "gate.baseline=latest", "gate.max_regression=0.05",
                "gate.on=lower", check=1)
    line = [ln for ln in r.stderr.splitlines() if "gate" in ln]
    assert len(line) == 1 and "max_regression" in line[0] and "baseline" in line[0]
    assert cli.run(*common, f"skill={skill}", "gate.min_delta=0.1", check=2).stderr.count("\n") == 1
    assert "gate.on" in cli.run(*common, f"skill={skill}", "gate.on=mean", check=2).stderr
    assert "together" in cli.run(*common, f"skill={skill}", "gate.baseline=latest", check=2).stderr


def test_junit_validates_and_counts_failed_queries(two_runs) -> None:  # noqa: ANN001
    import xml.etree.ElementTree as ET

    _, a, b, *_ = two_runs
    schema = xmlschema.XMLSchema(str(XSD))
    for res in (a, b):
        doc = json.loads(res.read_text())
        junit = res.with_name("junit.xml")
        schema.validate(str(junit))
        suite = ET.parse(junit).getroot().find("testsuite")
        failed = {" ".join(r["query"].split()) for r in doc["results"] if r["verdict"] == "fail"}
        cases = suite.findall("testcase")
        assert len(cases) == len(doc["results"])
        assert int(suite.get("failures")) == len(failed) == doc["summary"]["failed"]
        assert {c.get("name") for c in cases if c.find("failure") is not None} == failed
        md = res.with_name("summary.md").read_text()
        assert "| over | precision | recall | accuracy |" in md


def test_markdown_escapes_hostile_queries() -> None:
    from skilleval.reporting.markdown import md

    out = md("a | b <script>alert(1)</script> `x` [l](http://e)\nnext")
    assert "<script>" not in out and "\\|" in out and "\n" not in out and "\\`" in out
    # summary.md is also read with `cat` and in CI logs: control characters are written out
    out = md("red \x1b[31mtext\x07 \u202eevil")
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 or c == "\u202e" for c in out), repr(out)
    assert "x1b" in out and "u202e" in out


def test_multirun_writes_every_report_and_ends_with_one_table(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("-m", "+experiment=trigger_eval", "trigger.runs=1", "trigger.threshold=0.3,0.7",
                          "reporter=[console,junit,markdown]", "gate.min_accuracy=0.1", check=0)
    schema = xmlschema.XMLSchema(str(XSD))
    junits = sorted(skilleval_cli.outputs.rglob("junit.xml"))
    assert len(junits) == 2 and len(list(skilleval_cli.outputs.rglob("summary.md"))) == 2
    # each job's section (they append to one step summary) says which settings it ran
    mds = sorted(p.read_text() for p in skilleval_cli.outputs.rglob("summary.md"))
    assert [("threshold=0.3" in t, "threshold=0.7" in t) for t in mds] in (
        [(True, False), (False, True)], [(False, True), (True, False)]), mds
    for j in junits:
        schema.validate(str(j))
    table = r.stdout[r.stdout.index("sweep "):]
    assert "trigger.threshold=0.3" in table and "trigger.threshold=0.7" in table
    assert table.count("passed") == 2  # the gates column, one per job


def test_gates_are_not_checked_on_a_budget_stopped_run(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", "budget.max_calls=5",
                          "gate.min_recall=0.0", check=4)
    assert "gates not checked" in r.stderr and "gate passed" not in r.stdout


def test_summary_md_shows_each_failed_querys_errors(skilleval_cli) -> None:  # noqa: ANN001
    """Its failed-query table showed '0/1' where the console showed '0/1 (1 err, 1 t/o)':
    a query's errors are never hidden in a rate."""
    skilleval_cli.run("+experiment=trigger_eval", "backend.error_rate=0.3", "backend.timeout_rate=0.1",
                      "backend.max_retries=0", "reporter=[json,markdown]", "trigger.policy=fixed",
                      "trigger.max_error_rate=0.9", check=0)
    [res] = skilleval_cli.results()
    rows = json.loads(res.read_text())["results"]
    md = res.with_name("summary.md").read_text()
    shown = [r for r in rows if not r["pass"] and (r.get("errors") or r.get("timeouts"))]
    assert shown, "the faults must hit a query that did not pass"
    for r in shown:
        parts = [f"{r['errors']} err" if r.get("errors") else "", f"{r['timeouts']} t/o" if r.get("timeouts") else ""]
        assert f"({', '.join(p for p in parts if p)})" in md, (r, md)
