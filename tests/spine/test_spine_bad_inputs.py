"""Bad inputs and configs: exit 2 and exactly one stderr line naming the problem, no traceback."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from spine_helpers import CSV_DESCRIPTION, SMALL_CASES, write_cases, write_skill


def _skill(tmp: Path, frontmatter: str | None = None, *, raw: str | None = None) -> Path:
    d = write_skill(tmp, "csv-tidy", CSV_DESCRIPTION, frontmatter=frontmatter)
    if raw is not None:
        (d / "SKILL.md").write_text(raw)
    return d


def _good_cases(tmp: Path) -> Path:
    return write_cases(tmp / "cases.json", SMALL_CASES)


def malformed_yaml(tmp: Path) -> tuple[list[str], list[str]]:
    d = _skill(tmp, "name: csv-tidy\ndescription: [unclosed, list\n")
    return [f"skill={d}", f"cases={_good_cases(tmp)}"], ["malformed YAML frontmatter", str(d / "SKILL.md")]


def bad_indentation(tmp: Path) -> tuple[list[str], list[str]]:
    d = _skill(tmp, "name: csv-tidy\n  description: oops: two colons\n")
    return [f"skill={d}", f"cases={_good_cases(tmp)}"], ["malformed YAML frontmatter", "SKILL.md"]


def missing_frontmatter(tmp: Path) -> tuple[list[str], list[str]]:
    d = _skill(tmp, raw="# CSV tidy\n\nNo frontmatter here.\n")
    return [f"skill={d}", f"cases={_good_cases(tmp)}"], ["missing YAML frontmatter", str(d / "SKILL.md")]


def unclosed_frontmatter(tmp: Path) -> tuple[list[str], list[str]]:
    d = _skill(tmp, raw="---\nname: csv-tidy\ndescription: x\n# body, no closing line\n")
    return [f"skill={d}", f"cases={_good_cases(tmp)}"], ["missing YAML frontmatter"]


def description_not_a_string(tmp: Path) -> tuple[list[str], list[str]]:
    d = _skill(tmp, "name: csv-tidy\ndescription: 123\n")
    return [f"skill={d}", f"cases={_good_cases(tmp)}"], ["'description' must be a string", "int"]


def name_missing(tmp: Path) -> tuple[list[str], list[str]]:
    d = _skill(tmp, "description: Tidy CSV files.\n")
    return [f"skill={d}", f"cases={_good_cases(tmp)}"], ["no 'name'"]


def duplicate_queries(tmp: Path) -> tuple[list[str], list[str]]:
    d = _skill(tmp)
    cases = write_cases(tmp / "dupes.json", [*SMALL_CASES, (SMALL_CASES[1][0], False)])
    return [f"skill={d}", f"cases={cases}"], ["duplicate query", "dupes.json", "entry 6", "entry 1"]


def mistyped_eval_key(tmp: Path) -> tuple[list[str], list[str]]:
    d = _skill(tmp)
    cases = tmp / "typed.json"
    cases.write_text(json.dumps([{"query": "tidy my csv", "should_trigger": "yes"}]))
    return [f"skill={d}", f"cases={cases}"], ["typed.json", "entry 0", "should_trigger"]


def missing_eval_set(tmp: Path) -> tuple[list[str], list[str]]:
    d = _skill(tmp)
    return [f"skill={d}"], ["no eval set found", "trigger_eval.json", "+experiment=draft_evals skill="]


def unknown_backend(tmp: Path) -> tuple[list[str], list[str]]:
    return ["backend=nope"], ["backend/nope", "stub", "claude_cli", "anthropic_api"]


def missing_skill_folder(tmp: Path) -> tuple[list[str], list[str]]:
    return [f"skill={tmp / 'no-such-skill'}"], ["skill folder not found", "no-such-skill"]


def unknown_trigger_key(tmp: Path) -> tuple[list[str], list[str]]:
    return ["trigger.nope=1"], ["trigger.nope"]


def unknown_backend_param(tmp: Path) -> tuple[list[str], list[str]]:
    return ["backend.latencyms=3"], ["backend.latencyms"]


def wrong_param_type(tmp: Path) -> tuple[list[str], list[str]]:
    return ["backend.latency_ms=fast"], ["backend.latency_ms"]


def zero_runs(tmp: Path) -> tuple[list[str], list[str]]:
    return ["trigger.runs=0"], ["trigger.runs"]


def runs_not_a_number(tmp: Path) -> tuple[list[str], list[str]]:
    return ["trigger.runs=abc"], ["trigger.runs", "whole number", "abc"]


def threshold_not_a_number(tmp: Path) -> tuple[list[str], list[str]]:
    return ["trigger.threshold=high"], ["trigger.threshold", "high"]


def unknown_policy(tmp: Path) -> tuple[list[str], list[str]]:
    return ["trigger.policy=always"], ["trigger.policy", "always", "decided"]


def distractor_missing(tmp: Path) -> tuple[list[str], list[str]]:
    return [f"distractors=[{tmp / 'gone'}]"], ["skill folder not found", "gone"]


CASES = [malformed_yaml, bad_indentation, missing_frontmatter, unclosed_frontmatter,
         description_not_a_string, name_missing, duplicate_queries, mistyped_eval_key,
         missing_eval_set, unknown_backend, missing_skill_folder, unknown_trigger_key,
         unknown_backend_param, wrong_param_type, zero_runs, runs_not_a_number, threshold_not_a_number,
         unknown_policy, distractor_missing]


@pytest.mark.parametrize("make", CASES, ids=[c.__name__ for c in CASES])
def test_bad_input_exits_2_with_one_line(make, skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    args, fragments = make(tmp_path)
    r = skilleval_cli.run("+experiment=trigger_eval", "progress=false", *args)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("skilleval: ")
    for frag in fragments:
        assert frag in lines[0], lines[0]
    assert r.stdout.strip() == ""
    assert skilleval_cli.results() == []
    # Refused before the run's row is written: a typo leaves no failed run in the store.
    assert not list(skilleval_cli.store.glob("runs/**/*.parquet")), "a refused run was stored"


def _refused_elsewhere(tmp: Path) -> dict[str, tuple[str, list[str], str]]:
    """Inputs of experiments other than trigger_eval: experiment, arguments, what stderr names."""
    d = _skill(tmp)
    bad = tmp / "routing.json"
    bad.write_text(json.dumps([{"query": "tidy my csv", "expected_skill": "not-listed"}]))
    one_class = write_cases(tmp / "one-class.json", [(q, True) for q, _ in SMALL_CASES])
    renamed = write_skill(tmp, "csv-tidy", CSV_DESCRIPTION, folder="csv-tools")
    return {
        "routing-no-cases": ("routing", [f"skills=[{d}]"], "routing needs cases=FILE"),
        "routing-unknown-label": ("routing", [f"skills=[{d}]", f"cases={bad}"], "not-listed"),
        "routing-missing-skill": ("routing", [f"skills=[{tmp / 'gone'}]", f"cases={bad}"],
                                  "skill folder not found"),
        "opt-one-class": ("trigger_opt", [f"skill={d}", f"cases={one_class}"], "one-class.json"),
        "opt-apply-renamed-folder": ("trigger_opt", [f"skill={renamed}", f"cases={_good_cases(tmp)}",
                                                     "optimize.apply=true"], "optimize.apply=true"),
        "attribute-missing-skill": ("attribute", [f"skill={tmp / 'gone'}"], "skill folder not found"),
        "functional-missing-skill": ("functional_eval", [f"skill={tmp / 'gone'}"], "skill folder not found"),
        "attribute-mistyped-cases": ("attribute", [f"skill={d}", f"cases={tmp / 'nope.json'}"], "nope.json"),
        "functional-no-such-eval": ("functional_eval", ["functional.only=[999]"], "matches no eval"),
        "functional-mistyped-evals": ("functional_eval", [f"functional.evals={tmp / 'nope.json'}"], "nope.json"),
        "compare-mistyped-evals": ("compare", [f"functional.evals={tmp / 'nope.json'}"], "nope.json"),
        "draft-n-too-small": ("draft_evals", [f"skill={d}", "draft.n=1"], "draft.n must be at least 2"),
    }


@pytest.mark.parametrize("case", [
    "routing-no-cases", "routing-unknown-label", "routing-missing-skill", "opt-one-class",
    "opt-apply-renamed-folder", "attribute-missing-skill", "functional-missing-skill",
    "attribute-mistyped-cases", "functional-no-such-eval", "functional-mistyped-evals",
    "compare-mistyped-evals", "draft-n-too-small"])
def test_every_experiment_refuses_bad_input_before_storing_a_run(case: str, skilleval_cli,
                                                                  tmp_path: Path) -> None:  # noqa: ANN001
    """The inputs each experiment reads are checked before its run row is written
    (``check_inputs``), not found inside the experiment after a 'failed' run is stored."""
    experiment, args, fragment = _refused_elsewhere(tmp_path)[case]
    r = skilleval_cli.run(f"+experiment={experiment}", "progress=false", *args)
    assert r.returncode == 2, r.stderr
    assert fragment in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not list(skilleval_cli.store.glob("runs/**/*.parquet")), "a refused run was stored"


def test_an_output_folder_that_cannot_be_made_is_one_line(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Hydra makes the run's folder before the job starts: a path that is a file gave a
    FileExistsError / NotADirectoryError traceback and exit 1."""
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for args, env in (([f"hydra.run.dir={a_file}"], None),
                      ([], {"SKILLEVAL_OUTPUTS": str(a_file)}),
                      (["-m", f"hydra.sweep.dir={a_file}"], None)):
        head = ["-m"] if args[:1] == ["-m"] else []
        r = skilleval_cli.run(*head, "+experiment=trigger_eval", "trigger.runs=1", *args[len(head):],
                              env=env)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        [line] = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert "cannot make the run's output folder" in line and str(a_file) in line, line


def test_an_abbreviated_option_is_refused_not_taken_as_hydras(skilleval_cli) -> None:  # noqa: ANN001
    """`--versio` printed Hydra's version (Hydra's argparse takes any unambiguous prefix)."""
    r = skilleval_cli.run("--versio")
    assert r.returncode == 2 and "Hydra" not in r.stdout, r.stdout
    assert "did you mean --version?" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert skilleval_cli.run("--version", check=0).stdout.startswith("skilleval ")


@pytest.mark.parametrize("args,words", [
    (["+experiment=trigger_opt", "optimize.prescreen=nope"], "optimize.prescreen=nope: unknown backend"),
    (["+experiment=trigger_eval", "backend.latency_ms=-5"], "backend.latency_ms must be at least 0"),
    (["import", "SKILL_MD"], "is a file, not a workspace folder"),
    (["diff", "latest~1", "latest", "--store", "/nonexistent-store"], "store not found"),
])
def test_review_findings_say_which_setting(args, words, skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Each said too little: 'unknown backend' (which key?), a negative latency accepted,
    'workspace not found' for a file that exists, '0 finished runs' for a store that is not."""
    skill_md = tmp_path / "SKILL.md"
    skill_md.write_text("---\nname: x\ndescription: y\n---\n")
    r = skilleval_cli.run(*[str(skill_md) if a == "SKILL_MD" else a for a in args])
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr
