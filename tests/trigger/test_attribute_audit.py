"""Audit of `+experiment=attribute`: a budget stop is exit 4 (not bad input), errors are
counted and shown (and too many are exit 3, as in trigger_eval), sentences are not split at
"e.g.", and a zero effect never prints as "-0.00"."""
from __future__ import annotations

import json
from pathlib import Path

from skilleval.trigger import attribute
from skilleval.trigger.attribution import split_sentences

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "tests" / "fixtures" / "attribute" / "tidy"
CASES = REPO / "experiments" / "csv-tidy" / "evals" / "trigger_eval.json"
ARGS = ("+experiment=attribute", f"skill={SKILL}", f"cases={CASES}", "progress=false")


def test_budget_stop_is_exit_4_and_the_run_is_marked(skilleval_cli) -> None:
    r = skilleval_cli.run(*ARGS, "budget.max_calls=30", check=4)
    assert "budget stop" in r.stderr and "error: " not in r.stderr
    runs = json.loads(skilleval_cli.run("sql", "select status from runs", "--format", "json",
                                        check=0).stdout)
    assert [x["status"] for x in runs] == ["budget_stopped"]
    # the paid trials are kept: a rerun with room pays only for the rest
    trials = json.loads(skilleval_cli.run("sql", "select count(*) n from trials", "--format",
                                          "json", check=0).stdout)[0]["n"]
    assert trials == 30


def test_errors_are_counted_and_shown(skilleval_cli) -> None:
    r = skilleval_cli.run(*ARGS, "trigger.runs=1", "backend.error_rate=0.2", "backend.max_retries=0",
                          "trigger.max_error_rate=1", check=0)
    [path] = list(skilleval_cli.outputs.rglob("results.json"))
    res = json.loads(path.read_text())
    trials = json.loads(skilleval_cli.run("sql", "select outcome from trials", "--format", "json",
                                          check=0).stdout)
    errors = sum(t["outcome"] == "error" for t in trials)
    assert errors > 0 and res["errors"] == errors and res["trials"] == len(trials)
    assert f"errors {errors}" in r.stdout


def test_too_many_errors_is_exit_3(skilleval_cli) -> None:
    r = skilleval_cli.run(*ARGS, "trigger.runs=1", "backend.error_rate=0.9", "backend.max_retries=0",
                          check=3)
    assert "max_error_rate" in r.stderr and "sentence attribution" not in r.stdout


def test_sentences_are_not_split_at_abbreviations() -> None:
    assert split_sentences("Tidy tables, e.g. orders.csv or a TSV. Fixes dates, i.e. to ISO. "
                           "Works vs. Excel too.") == [
        "Tidy tables, e.g. orders.csv or a TSV.", "Fixes dates, i.e. to ISO.", "Works vs. Excel too."]


def test_a_zero_effect_prints_without_a_minus_sign() -> None:
    zero = {"value": 0.0, "low": -0.0, "high": 0.001, "queries": 5}
    assert attribute._fmt(zero, neg=True) == "+0.00 [+0.00, +0.00]"
    assert attribute._fmt({"value": 0.2, "low": 0.1, "high": 0.3, "queries": 5}, neg=True) == \
        "-0.20 [-0.30, -0.10]"


def test_an_ignored_trigger_policy_is_said(skilleval_cli) -> None:
    """attribute and routing count every run (fixed policy); a trigger.policy=decided given
    on the command line was dropped without a word."""
    r = skilleval_cli.run(*ARGS, "trigger.policy=decided", "trigger.runs=1", check=0)
    assert "trigger.policy=decided is not used" in r.stderr + r.stdout
    r = skilleval_cli.run(*ARGS, "trigger.runs=1", check=0)
    assert "is not used" not in r.stderr + r.stdout


def test_attribute_settings_out_of_range_are_bad_input(skilleval_cli) -> None:
    """permutations=0 or bootstrap=0 ended in a numpy traceback (exit 1) after every call."""
    for bad in ("attribute.permutations=0", "attribute.bootstrap=0", "attribute.exact_max=-1"):
        r = skilleval_cli.run(*ARGS, bad, "attribute.exact_max=1" if "perm" in bad else "progress=false",
                              check=2)
        errors = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(errors) == 1 and bad.split("=")[0] in errors[0] and "Traceback" not in r.stderr
    assert not (skilleval_cli.store / "trials").exists()  # refused before any call
