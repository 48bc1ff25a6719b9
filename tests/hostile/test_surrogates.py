"""Lone UTF-16 surrogates (a JSON/YAML ``\\ud83d`` escape without its pair, or a non-UTF-8
byte on the command line, which Python hands over as ``\\udcff``) cannot be written as UTF-8:
they used to crash a run with a UnicodeEncodeError traceback and exit 1 (a gate's code) when
the description was hashed or the eval set reached the store. Each is bad input: exit 2, one
line naming the file (or key) and where, before any call."""
from __future__ import annotations

from pathlib import Path

import pytest
from shared_helpers import one_line_error

TRIGGER = ("+experiment=trigger_eval", "backend=stub")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:  # noqa: ANN001
    d = tmp_path_factory.mktemp("surrogates")
    good = "---\nname: {n}\ndescription: {desc}\n---\nbody\n"
    (d / "yaml-escape").mkdir()
    (d / "yaml-escape" / "SKILL.md").write_text(
        good.format(n="yaml-escape", desc='"Extract invoices \\ud83d from PDFs."'))
    (d / "ok").mkdir()
    (d / "ok" / "SKILL.md").write_text(good.format(n="ok", desc="Extract invoices from PDFs."))
    (d / "ok" / "evals").mkdir()
    (d / "ok" / "evals" / "trigger_eval.json").write_text(
        '[{"query": "invoice pdf totals", "should_trigger": true},'
        ' {"query": "write a poem", "should_trigger": false}]')
    (d / "lone.json").write_text(
        '[{"query": "invoice pdf totals", "should_trigger": true},\n'
        ' {"query": "invoice \\ud83d pdf", "should_trigger": true}]')
    (d / "lone-key.json").write_text(
        '[{"query": "invoice pdf totals", "should_trigger": true, "note\\udcff": 1}]')
    (d / "lone.jsonl").write_text('{"query": "a poem", "should_trigger": false}\n'
                                  '{"query": "x \\udcff", "should_trigger": true}\n')
    (d / "variants.yaml").write_text('v1: "Extract invoices \\ud83d from PDFs."\n')
    return d


CASES = {
    "SKILL.md escape": ((*TRIGGER, "skill={d}/yaml-escape"), ("SKILL.md", "'description'", "surrogate")),
    "validate": (("validate", "{d}/yaml-escape"), ("SKILL.md", "surrogate")),
    "eval set escape": ((*TRIGGER, "skill={d}/ok", "cases={d}/lone.json"),
                        ("lone.json", "entry 1", "'query'", "surrogate")),
    "eval set key": ((*TRIGGER, "skill={d}/ok", "cases={d}/lone-key.json"),
                     ("lone-key.json", "entry 0", "(the key)", "U+DCFF")),
    "eval set jsonl": ((*TRIGGER, "skill={d}/ok", "cases={d}/lone.jsonl"),
                       ("lone.jsonl", "line 2", "surrogate")),
    "description= byte": ((*TRIGGER, "skill={d}/ok", "description=Extract \udcff invoices."),
                          ("description=", "UTF-8")),
    "variants file": (("-m", *TRIGGER, "skill={d}/ok", "variants={d}/variants.yaml", "variant=v1"),
                      ("variants=", "'v1'", "UTF-8")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_unencodable_text_is_one_line_exit_2(make_skilleval_cli, tmp_path: Path, files: Path,
                                             case: str) -> None:
    args, needles = CASES[case]
    cli = make_skilleval_cli(tmp_path)
    r = cli.run(*(a.format(d=files) for a in args))
    line = one_line_error(r, 2)
    for needle in needles:
        assert needle in line, line
    assert not (cli.store / "trials").exists(), "a trial was stored before the input was checked"
