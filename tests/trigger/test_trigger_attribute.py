"""`+experiment=attribute`: sentence attribution by leave-one-out and Shapley values."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from skilleval.trigger import attribution as attr

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "tests" / "fixtures" / "attribute" / "tidy"  # sentence 1 carries every domain word
CASES = REPO / "experiments" / "csv-tidy" / "evals" / "trigger_eval.json"


def test_exact_and_sampled_shapley_on_a_known_game() -> None:
    # v(S) per "query": sentence 0 is worth 1, sentence 1 worth 0.5 but only with sentence 0.
    def value(s: frozenset[int]) -> np.ndarray:
        return np.array([1.0 * (0 in s) + 0.5 * (0 in s and 1 in s), 0.2 * (2 in s)])

    exact = attr.shapley_exact(3, value)
    assert np.allclose(exact[:, 0], [1.25, 0.25, 0.0]) and np.allclose(exact[:, 1], [0, 0, 0.2])
    sampled = attr.shapley_sampled(3, attr.permutations(3, 400, seed=1), value)
    assert np.allclose(sampled, exact, atol=0.06)
    assert np.allclose(attr.leave_one_out(3, value)[:, 0], [1.5, 0.5, 0.0])
    assert attr.split_sentences("One. Two three! Four?  Five") == ["One.", "Two three!", "Four?", "Five"]


def _result(cli) -> dict:  # noqa: ANN001
    return json.loads(max(cli.outputs.rglob("results.json"), key=lambda p: p.stat().st_mtime_ns).read_text())


def test_domain_sentence_ranks_first_with_interval_excluding_zero(skilleval_cli) -> None:
    args = ("+experiment=attribute", f"skill={SKILL}", f"cases={CASES}", "progress=false")
    r = skilleval_cli.run(*args, check=0)
    assert "sentence attribution" in r.stdout
    res = _result(skilleval_cli)
    assert res["method"] == "exact" and res["coalitions"] == 8
    assert res["ranking"][0] == 0
    top = res["attribution"][0]["shapley_recall"]
    assert top["low"] > 0 and top["queries"] == 10
    loo = res["attribution"][0]["loo_recall"]
    assert loo["low"] > 0  # removing it loses recall, with an interval excluding 0
    # Trials are content-addressed: a second run pays for nothing.
    skilleval_cli.run(*args, check=0)
    rows = json.loads(skilleval_cli.run("sql", "select summary_json from runs where status='done' "
                                        "order by ts", "--format", "json", check=0).stdout)
    second = json.loads(rows[-1]["summary_json"])
    assert second["calls_made"] == 0 and second["calls_cached"] > 0


def test_sampled_shapley_beyond_exact_max(skilleval_cli) -> None:
    skilleval_cli.run("+experiment=attribute", f"skill={SKILL}", f"cases={CASES}", "progress=false",
                      "attribute.exact_max=2", "attribute.permutations=30", "trigger.runs=1", check=0)
    res = _result(skilleval_cli)
    assert res["method"] == "sampled" and res["permutations"] == 30
    assert res["ranking"][0] == 0


HOSTILE_DESC = ("Clean messy CSV and TSV files by removing duplicate rows and fixing delimiters. "
                "[bold red]LOUD[/bold red] [link=file:///etc/passwd]click[/link] \x1b[2J\x1b]0;pwned\x07 "
                "ends [/] here. \u202eReversed text for widgets.")


def test_hostile_sentences_are_escaped_in_the_terminal(skilleval_cli, tmp_path: Path) -> None:
    skill = tmp_path / "hostile-tidy"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: hostile-tidy\ndescription: " + json.dumps(HOSTILE_DESC)
                                    + "\n---\n\n# Tidy\n\nTidy CSV files.\n", encoding="utf-8")
    env = {k: v for k, v in skilleval_cli.env.items() if k != "NO_COLOR"}
    r = skilleval_cli.run("+experiment=attribute", f"skill={skill}", f"cases={CASES}", "progress=false",
                          "trigger.runs=1", "attribute.bootstrap=200", env={**env, "FORCE_COLOR": "1"},
                          check=0)
    out = r.stdout
    assert "sentence attribution" in out
    assert "[bold red]LOUD[/bold red]" in out and "[link=file:///etc/passwd]" in out and "[/]" in out
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\u202e" not in out and "\x07" not in out
    assert "\\x1b[2J" in out and "\\u202e" in out  # shown, not executed
    assert "\x1b]8;" not in out  # no live hyperlink


def test_full_description_reuses_trials_paid_by_trigger_eval(skilleval_cli, tmp_path: Path) -> None:
    # two spaces between sentences: re-joining the sentences would give another description
    desc = "  ".join(attr.split_sentences(
        (SKILL / "SKILL.md").read_text().split("description: ", 1)[1].split("\n", 1)[0]))
    skill = tmp_path / "tidy-helper"
    skill.mkdir()
    (skill / "SKILL.md").write_text(f"---\nname: tidy-helper\ndescription: {json.dumps(desc)}\n---\n\n"
                                    "# Tidy\n\nTidy CSV files.\n", encoding="utf-8")
    skilleval_cli.run("+experiment=trigger_eval", f"skill={skill}", f"cases={CASES}", "progress=false",
                      "trigger.runs=1", check=0)
    skilleval_cli.run("+experiment=attribute", f"skill={skill}", f"cases={CASES}", "progress=false",
                      "trigger.runs=1", "attribute.bootstrap=200", check=0)
    rows = json.loads(skilleval_cli.run("sql", "select summary_json from runs where status='done' "
                                        "order by ts", "--format", "json", check=0).stdout)
    s = json.loads(rows[-1]["summary_json"])
    assert s["calls_cached"] >= 20  # the verbatim description's 20 trials were not paid again
