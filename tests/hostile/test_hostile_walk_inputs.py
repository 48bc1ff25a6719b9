"""Hostile inputs a walk-through found getting past one reader or another: each is exit 2 and
one line naming the file, before any call, on every command that reads it."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from shared_helpers import one_line_error

REPO = Path(__file__).resolve().parents[2]
TRIGGER = ("+experiment=trigger_eval", "backend=stub", "progress=false")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:  # noqa: ANN001
    d = tmp_path_factory.mktemp("walk-inputs")
    lines = ["---", "name: bomb", "description: Clean CSV files.",
             'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    prev = "a"
    for name in "bcdefghi":  # 9^9 = 387 M nodes once expanded, from 400 bytes
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
        prev = name
    (d / "bomb").mkdir()
    (d / "bomb" / "SKILL.md").write_text("\n".join([*lines, "---", "Body."]) + "\n")
    shutil.copytree(REPO / "experiments" / "csv-tidy", d / "csv-tidy")
    shutil.copytree(REPO / "experiments" / "csv-tidy", d / "bytes" / "csv-tidy")
    (d / "bytes" / "csv-tidy").joinpath(os.fsdecode(b"bad\xffname.txt")).write_bytes(b"x")
    (d / "rt").mkdir()
    for name in ("csv-tidy", "recipe-scaler"):
        shutil.copytree(REPO / "experiments" / name, d / "rt" / name)
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "lone.json").write_text('[{"query": "\\ud800", "should_trigger": true}]')
    (d / "dup.json").write_text('[{"query": "tidy my csv", "should_trigger": true, "should_trigger": false},'
                                ' {"query": "a poem", "should_trigger": false}]')
    (d / "nul.json").write_text('[{"query": "dedupe a\\u0000b", "should_trigger": true},'
                                ' {"query": "a poem", "should_trigger": false}]')
    (d / "rt-lone.json").write_text('[{"query": "\\ud800 x", "expected_skill": null},'
                                    ' {"query": "dedupe csv", "expected_skill": "csv-tidy"}]')
    (d / "rt-nul.json").write_text('[{"query": "a\\u0000b", "expected_skill": null},'
                                   ' {"query": "dedupe csv", "expected_skill": "csv-tidy"}]')
    return d


ROUTING = ("+experiment=routing", "backend=stub", "progress=false", "skills={d}/rt")
CASES = {
    # a YAML alias bomb hung validate and every run walking 387 M nodes
    "alias bomb validate": (("validate", "{d}/bomb"), "alias *a"),
    "alias bomb run": ((*TRIGGER, "skill={d}/bomb"), "alias *a"),
    # a file name that is not UTF-8: validate passed it, package and runs crashed
    "non-UTF-8 name validate": (("validate", "{d}/bytes/csv-tidy"), "bad\\xffname.txt"),
    "non-UTF-8 name package": (("package", "{d}/bytes/csv-tidy", "-o", "{d}/dist"), "bad\\xffname.txt"),
    "non-UTF-8 name run": ((*TRIGGER, "skill={d}/bytes/csv-tidy"), "the file name is not valid UTF-8"),
    # four readers of JSON did not share the checked one (RecursionError, UnicodeEncodeError)
    "deep check-evals": (("check-evals", "{d}/deep.json", "--skill", "{d}/csv-tidy"), "nested too deeply"),
    "deep review-evals": (("review-evals", "{d}/deep.json", "--no-open", "--port", "0"), "nested too deeply"),
    "deep routing": ((*ROUTING, "cases={d}/deep.json"), "nested too deeply"),
    "deep diff": (("diff", "{d}/deep.json", "{d}/deep.json"), "nested too deeply"),
    "surrogate check-evals": (("check-evals", "{d}/lone.json", "--skill", "{d}/csv-tidy"), "surrogate"),
    "surrogate review-evals": (("review-evals", "{d}/lone.json", "--no-open", "--port", "0"), "surrogate"),
    "surrogate routing": ((*ROUTING, "cases={d}/rt-lone.json"), "surrogate"),
    # json keeps the last of two keys: measured as a negative with no word
    "duplicate key run": ((*TRIGGER, "skill={d}/csv-tidy", "cases={d}/dup.json"), "'should_trigger' twice"),
    "duplicate key check-evals": (("check-evals", "{d}/dup.json", "--skill", "{d}/csv-tidy"), "'should_trigger' twice"),
    # a NUL passed the stub and failed every claude_cli trial after the run had paid for the rest
    "NUL run": ((*TRIGGER, "skill={d}/csv-tidy", "cases={d}/nul.json"), "NUL character"),
    "NUL routing": ((*ROUTING, "cases={d}/rt-nul.json"), "NUL character"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_input_is_one_line_exit_2(make_skilleval_cli, tmp_path: Path, files: Path, case: str) -> None:
    args, needle = CASES[case]
    cli = make_skilleval_cli(tmp_path)
    r = cli.run(*(a.format(d=files) for a in args), timeout=60, check=None)
    line = one_line_error(r, 2)
    assert needle in line, line
    assert not (cli.store / "trials").exists(), "a trial was stored before the input was checked"


def test_a_problem_of_another_file_is_not_put_on_skill_md(make_skilleval_cli, tmp_path: Path,
                                                          files: Path) -> None:
    """`package` printed ".../SKILL.md: .../bad\\xffname.txt: ..." (SKILL.md is fine; the path
    twice); `validate` already named the file alone. Both now say the same line."""
    cli = make_skilleval_cli(tmp_path)
    lines = [one_line_error(cli.run(*args, timeout=60, check=None), 2)
             for args in (("package", f"{files}/bytes/csv-tidy", "-o", f"{tmp_path}/dist"),
                          ("validate", f"{files}/bytes/csv-tidy"))]
    for line in lines:
        assert "SKILL.md" not in line and line.count("csv-tidy/") == 1, line


@pytest.mark.parametrize("content,words", [("models:\n  x: [1, 2\n", "not valid YAML: expected ',' or ']'"),
                                           ("- a\n- b\n", "expected a mapping with 'models'"),
                                           ("models: [1]\n", "expected a mapping with 'models'")])
def test_a_bad_pricing_file_is_exit_2_before_any_call(make_skilleval_cli, tmp_path: Path, sim,
                                                      content: str, words: str) -> None:  # noqa: ANN001
    """backend.pricing_file was read when the first answer was priced: the self-check's calls
    were made, each trial failed on the file, and the run said "Check the API key" (exit 3)."""
    cli = make_skilleval_cli(tmp_path)
    prices = tmp_path / "prices.yaml"
    prices.write_text(content)
    before = sim.stats().get("POST /v1/messages", 0)
    r = cli.run(*TRIGGER, "backend=anthropic_api", f"backend.base_url={sim.url}", "backend.model=sim-1",
                f"backend.pricing_file={prices}", timeout=120, check=None)
    line = one_line_error(r, 2)
    assert "backend.pricing_file" in line and words in line, line
    assert sim.stats().get("POST /v1/messages", 0) == before


def test_a_yaml_error_in_a_variants_file_says_where(make_skilleval_cli, tmp_path: Path) -> None:
    cli = make_skilleval_cli(tmp_path)
    (tmp_path / "v.yaml").write_text("good: Fine text.\nbad: Use this: for things\n")
    r = cli.run("-m", *TRIGGER, f"variants={tmp_path / 'v.yaml'}", "variant=glob(*)", timeout=60, check=None)
    assert "mapping values are not allowed here at line 2 column 14" in one_line_error(r, 2)
