"""Item 8: each bad input is one line on stderr and exit 2, checked before any call is made
(no trial or execution reaches the store)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from shared_helpers import one_line_error

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:  # noqa: ANN001
    d = tmp_path_factory.mktemp("bad-inputs")
    (d / "nonutf").mkdir()
    (d / "nonutf" / "SKILL.md").write_bytes(b"---\nname: nonutf\ndescription: caf\xe9\n---\nbody\n")
    (d / "dup").mkdir()
    (d / "dup" / "SKILL.md").write_text("---\nname: dup\ndescription: a\nname: dup\n---\nbody\n")
    (d / "nonutf.json").write_bytes(b'[{"query": "caf\xe9", "should_trigger": true}]')
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "evals-nonutf.json").write_bytes(b'{"evals": [{"prompt": "caf\xe9"}]}')
    (d / "a-file").write_text("x")
    (d / "opt-results.json").write_text(json.dumps({"history": [], "best_description": "x",
                                                    "runs": ["20261202T000000-0123456789"]}))
    task = {"id": 1, "prompt": "Clean evals/files/contacts.csv and write outputs/contacts_clean.csv",
            "files": ["evals/files/contacts.csv"]}
    (d / "input-escapes.json").write_text(json.dumps({"evals": [{**task, "files": ["../../../../../etc/passwd"],
                                                                 "expectations": ["x"]}]}))
    for name, check in TYPED_CHECKS.items():
        (d / f"typed-{name}.json").write_text(json.dumps({"evals": [{**task, "expectations": [check]}]}))
    (d / "input-folder.json").write_text(json.dumps({"evals": [{**task, "files": ["evals/files"],
                                                                "expectations": ["x"]}]}))
    (d / "misspelt-eval-key.json").write_text(json.dumps({"evals": [{**task, "expectatons": ["x"]}]}))
    (d / "sloop").symlink_to("sloop")
    return d


# a typed check that can never read its file is a bad eval set, not a graded "fail" in every
# run (nor, for `contains` without text, a "pass" in every run)
TYPED_CHECKS = {
    "no-path": {"type": "file_exists"},
    "traversal": {"type": "file_exists", "path": "../../../etc/passwd"},
    "absolute": {"type": "contains", "path": "/etc/passwd", "text": "root"},
    "no-text": {"type": "contains", "path": "outputs/contacts_clean.csv"},
    "no-query": {"type": "json_path", "path": "outputs/report.json", "equals": 24},
    "bad-query": {"type": "json_path", "path": "outputs/report.json", "query": "rows_in(", "equals": 24},
    # "equal" for "equals": the check asked only for a value, and passed every run
    "unknown-type": {"type": "file_exist", "path": "outputs/x.csv"},
    "misspelt-option": {"type": "json_path", "path": "outputs/report.json", "query": "$.rows_in", "equal": 24},
}
TRIGGER = ("+experiment=trigger_eval", "backend=stub")
FUNCTIONAL = ("+experiment=functional_eval", "backend=stub")
CASES = {
    "validate non-UTF-8": (("validate", "{d}/nonutf"), "not valid UTF-8"),
    "duplicate frontmatter key": (("validate", "{d}/dup"), "duplicate key 'name'"),
    "duplicate key in a run": ((*TRIGGER, "skill={d}/dup"), "duplicate key 'name'"),
    "eval set non-UTF-8": ((*TRIGGER, "cases={d}/nonutf.json"), "not valid UTF-8"),
    "eval set nested": ((*TRIGGER, "cases={d}/deep.json"), "nested too deeply"),
    "evals.json non-UTF-8": ((*FUNCTIONAL, "functional.evals={d}/evals-nonutf.json"), "not valid UTF-8"),
    "confidence=2": ((*TRIGGER, "trigger.confidence=2"), "trigger.confidence"),
    "confidence=1": ((*TRIGGER, "trigger.confidence=1"), "trigger.confidence"),
    "confidence=0": ((*TRIGGER, "trigger.confidence=0"), "trigger.confidence"),
    "max_error_rate=abc": ((*TRIGGER, "trigger.max_error_rate=abc"), "trigger.max_error_rate"),
    "max_error_rate=-1": ((*TRIGGER, "trigger.max_error_rate=-1"), "trigger.max_error_rate"),
    "min_valid>runs": ((*TRIGGER, "trigger.min_valid=100", "trigger.runs=3"), "trigger.min_valid"),
    "flush_seconds=abc": ((*TRIGGER, "store.flush_seconds=abc"), "store.flush_seconds"),
    "functional.runs=abc": ((*FUNCTIONAL, "functional.runs=abc"), "functional.runs"),
    "functional.max_turns=abc": ((*FUNCTIONAL, "functional.max_turns=abc"), "functional.max_turns"),
    "functional.bootstrap=-5": ((*FUNCTIONAL, "functional.bootstrap=-5"), "functional.bootstrap"),
    "functional.confidence=5": ((*FUNCTIONAL, "functional.confidence=5"), "functional.confidence"),
    "cases is a folder": ((*TRIGGER, "cases={d}/dup"), "dup is a folder: give the file"),
    "functional.evals is a folder": ((*FUNCTIONAL, "functional.evals={d}/dup"), "dup is a folder: give the file"),
    "input file outside the skill": ((*FUNCTIONAL, "functional.evals={d}/input-escapes.json"),
                                     "input-escapes.json: eval id 1: eval input file '../"),
    "typed check without path": ((*FUNCTIONAL, "functional.evals={d}/typed-no-path.json"), "needs a non-empty string 'path'"),
    "typed check escapes": ((*FUNCTIONAL, "functional.evals={d}/typed-traversal.json"), "escapes the sandbox"),
    "typed check absolute": ((*FUNCTIONAL, "functional.evals={d}/typed-absolute.json"), "relative to the sandbox"),
    "contains without text": ((*FUNCTIONAL, "functional.evals={d}/typed-no-text.json"), "needs a non-empty 'text'"),
    "json_path without query": ((*FUNCTIONAL, "functional.evals={d}/typed-no-query.json"), "needs a string 'query'"),
    "json_path bad query": ((*FUNCTIONAL, "functional.evals={d}/typed-bad-query.json"), "must start with '$'"),
    "check option misspelt": ((*FUNCTIONAL, "functional.evals={d}/typed-misspelt-option.json"),
                              "typed-misspelt-option.json: eval #0 expectation #0: a json_path check has no key "
                              "'equal' (did you mean 'equals'?"),
    "input file is a folder": ((*FUNCTIONAL, "functional.evals={d}/input-folder.json"),
                               "eval input file 'evals/files' is a folder: list the files in it"),
    "eval key misspelt": ((*FUNCTIONAL, "functional.evals={d}/misspelt-eval-key.json"),
                          "misspelt-eval-key.json: eval #0: an eval has no key 'expectatons' (did you mean 'expectations'?"),
    "bogus arm": ((*FUNCTIONAL, "functional.arms=[with_skill,bogus]"), "'bogus'"),
    "bogus tool": ((*FUNCTIONAL, "functional.tools=[rm_rf]"), "'rm_rf'"),
    # stored and never enforced: the executors always allow edits inside the sandbox
    "permissions read-only": ((*FUNCTIONAL, "functional.permissions=read-only"),
                              "functional.permissions='read-only': the executors support sandbox-write only"),
    "unknown check type": ((*FUNCTIONAL, "functional.evals={d}/typed-unknown-type.json"),
                           "typed-unknown-type.json: eval id 1 expectation #0: "),
    "error_rate=2": ((*TRIGGER, "backend.error_rate=2"), "backend.error_rate"),
    # an unknown layout sent no listing: recall 0 %, exit 0; a timeout of -5 s: exit 3
    "api layout": (("+experiment=trigger_eval", "backend=anthropic_api", "backend.layout=tool_line"),
                   "backend.layout='tool_line': one of auto, reminder"),
    "api extra tool": (("+experiment=trigger_eval", "backend=anthropic_api", "backend.extra_tools=[Raed]"),
                       "backend.extra_tools: unknown 'Raed'"),
    "api timeout": (("+experiment=trigger_eval", "backend=anthropic_api", "backend.timeout_s=-5"),
                    "backend.timeout_s must be above 0, got -5"),
    # an ftp:// URL failed every self-check call (exit 3 after 20 s); "notaurl" was looked up
    "api base_url no scheme": (("+experiment=trigger_eval", "backend=anthropic_api", "backend.base_url=notaurl"),
                               "backend.base_url='notaurl': give an http:// or https:// URL"),
    "cli base_url ftp": (("+experiment=trigger_eval", "backend=claude_cli", "backend.executable=/bin/true",
                          "backend.base_url=ftp://127.0.0.1:1"), "backend.base_url='ftp://127.0.0.1:1'"),
    "api concurrency": (("+experiment=trigger_eval", "backend=anthropic_api", "backend.concurrency=0"),
                        "backend.concurrency must be at least 1, got 0"),
    "cli work_root": (("+experiment=trigger_eval", "backend=claude_cli", "backend.executable=/bin/true",
                       "backend.work_root=/nonexistent/dir"), "backend.work_root=/nonexistent/dir: no such folder"),
    "cli timeout": (("+experiment=trigger_eval", "backend=claude_cli", "backend.executable=/bin/true",
                     "backend.timeout_s=0"), "backend.timeout_s must be above 0, got 0"),
    # 2^30 subsets filled the memory before the plan line: the kernel killed the run
    "attribute.exact_max=30": (("+experiment=attribute", "backend=stub", "attribute.exact_max=30"),
                               "attribute.exact_max must be at most 12, got 30"),
    "attribute.permutations huge": (("+experiment=attribute", "backend=stub", "attribute.permutations=10000000"),
                                    "attribute.permutations must be at most 10,000"),
    "distractors not a list": ((*TRIGGER, "distractors=notalist"), "distractors must be a list"),
    "optimize.candidates=0": (("+experiment=trigger_opt", "optimize.candidates=0"),
                              "optimize.candidates must be at least 1, got 0"),
    "optimize.max_iterations=-1": (("+experiment=trigger_opt", "optimize.max_iterations=-1"),
                                   "optimize.max_iterations must be at least 1, got -1"),
    "diff a trigger_opt results.json": (("diff", "{d}/opt-results.json", "{d}/opt-results.json"),
                                        "a trigger_opt results.json"),
    "unquoted latest~1": ((*TRIGGER, "gate.baseline=latest~1"), "quote it, as in gate.baseline='latest~1'"),
    "--version with an argument": (("--version", "extra"), "--version takes no arguments, got extra"),
    "sql empty": (("sql", ""), "no query that returns rows"),
    "sql only a comment": (("sql", "-- nothing"), "no query that returns rows"),
    "sql --store missing": (("sql", "select 1", "--store", "{d}/no-store"), "store not found"),
    "store stats --store a file": (("store", "stats", "--store", "{d}/a-file"), "(a file, not a folder)"),
    "store compact --store missing": (("store", "compact", "--store", "{d}/no-store"), "store not found"),
    "package -o under a file": (("package", str(CSV_TIDY), "-o", "{d}/a-file/sub"), "cannot make the folder"),
    "package -o file": (("package", str(CSV_TIDY), "-o", "{d}/a-file"), "not a folder"),
    "package into itself": (("package", "{d}/p3", "-o", "{d}/p3"), "inside the skill folder"),
    "package symlink loop": (("package", "{d}/loop", "-o", "{d}/dist"), "symlink loop"),
    "serve-sim port": (("serve-sim", "--port", "99999"), "--port"),
    "store.root file": ((*TRIGGER, "store.root={d}/a-file"), "not a folder"),
    "store.root /dev/null": ((*TRIGGER, "store.root=/dev/null"), "not a folder"),
    "store.root /proc/x": ((*TRIGGER, "store.root=/proc/x"), "cannot create"),
    "store.root loop": ((*TRIGGER, "store.root={d}/sloop"), "loop"),
    "store.root backslash": ((*TRIGGER, "store.root={d}/a\\\\b"), "backslash"),
}


def _prepare_package_cases(d: Path) -> None:
    import shutil

    if not (d / "p3").exists():
        shutil.copytree(CSV_TIDY, d / "p3")
        md = d / "p3" / "SKILL.md"
        md.write_text(md.read_text().replace("name: csv-tidy", "name: p3", 1))
    loop = d / "loop"
    if not loop.exists():
        loop.mkdir()
        (loop / "SKILL.md").write_text("---\nname: loop\ndescription: Loops.\n---\nbody\n")
        (loop / "a").symlink_to("b")
        (loop / "b").symlink_to("a")
        (loop / "up").symlink_to("..")


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_exit_2_before_any_call(make_skilleval_cli, tmp_path: Path, files: Path,
                                                      case: str) -> None:
    _prepare_package_cases(files)
    args, needle = CASES[case]
    cli = make_skilleval_cli(tmp_path)
    r = cli.run(*(a.format(d=files) for a in args))
    line = one_line_error(r, 2)
    assert needle in line, line
    for table in ("trials", "executions", "queries"):
        assert not (cli.store / table).exists(), f"{table} written before the input was checked"
    assert not (files / "p3" / "p3.skill").exists()
    assert not (files / "no-store").exists()  # a mistyped --store is not created


def test_package_dot_names_the_folder(tmp_path: Path, skilleval_cli) -> None:
    import shutil

    shutil.copytree(CSV_TIDY, tmp_path / "csv-tidy")
    r = subprocess.run([sys.executable, "-m", "skilleval.cli", "package", ".", "-o", str(tmp_path / "dist")],
                       cwd=tmp_path / "csv-tidy", env=skilleval_cli.env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "dist" / "csv-tidy.skill").is_file()


@pytest.mark.parametrize("argv", [["--help"], ["plugins"], ["sql", "select * from range(5000)"]])
def test_closed_pipe_is_one_line_exit_2(skilleval_cli, argv: list[str]) -> None:
    r = subprocess.run(f"{sys.executable} -m skilleval.cli {' '.join(repr(a) for a in argv)} | true",
                       shell=True, cwd=skilleval_cli.cwd, env=skilleval_cli.env, capture_output=True,
                       text=True, executable="/bin/bash")
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in r.stderr
    assert lines in ([], ["skilleval: error: output closed early (broken pipe)"]), r.stderr
