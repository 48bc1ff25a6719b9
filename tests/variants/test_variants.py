"""Issue 15: description variants as sweep values, with a sweep summary that compares them.

Everything runs the real console entry point (`python -m skilleval.cli`) on the stub
backend into a private store; p-values are checked against scipy's exact binomial test.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import binomtest

from skilleval.errors import UserError
from skilleval.variants.expand import expand_variant_args

from shared_helpers import CHANGELOG_VARIANTS

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "experiments" / "changelog-writer"
VARIANTS = CHANGELOG_VARIANTS


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, make_skilleval_cli):
    root = tmp_path_factory.mktemp("variants")
    cli = make_skilleval_cli(root)
    skill = root / "changelog-writer"
    shutil.copytree(EXAMPLE, skill)
    vfile = root / "variants.yaml"
    vfile.write_text(json.dumps(VARIANTS))  # JSON is YAML too
    before = (skill / "SKILL.md").read_bytes()
    out = cli.run("-m", "+experiment=trigger_eval", f"skill={skill}", f"variants={vfile}",
                  "variant=a,b,c,original", "progress=false", check=0)
    return cli, skill, vfile, before, out


def _results(cli) -> list[dict]:
    return [json.loads(p.read_text()) for p in cli.results()]


def test_each_job_measures_its_variant_and_records_it(sweep):
    cli, skill, _, before, _ = sweep
    res = {r["variant"]: r for r in _results(cli)}
    assert sorted(res) == ["a", "b", "c", "original"]
    for name, text in VARIANTS.items():
        assert res[name]["description"] == text
        assert res[name]["description_hash"] == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert res["original"]["description"] == "Helps with project documentation tasks."
    assert (skill / "SKILL.md").read_bytes() == before  # never touched
    from skilleval.store.catalog import Store

    rows = Store(cli.store).query("select variant, description_hash from runs").to_pylist()
    assert {r["variant"]: r["description_hash"] for r in rows} == \
        {n: r["description_hash"] for n, r in res.items()}
    # what the backend saw: the trials of job "b" list b's description for the skill
    seen = Store(cli.store).query(
        "select distinct t.description from trials t join runs r using (run_id) "
        "where r.variant = 'b'").to_pylist()
    assert seen == [{"description": VARIANTS["b"]}]


def test_the_summary_compares_the_variants_with_exact_mcnemar(sweep):
    cli, *_, out = sweep
    assert "by variant × model" in out.stdout
    res = {r["variant"]: r for r in _results(cli)}
    acc = {n: sum(q["pass"] for q in r["results"]) / len(r["results"]) for n, r in res.items()}
    best = max(acc, key=lambda n: (acc[n], n == "original"))
    [summary_file] = list(cli.outputs.rglob("sweep_summary.json"))
    summary = json.loads(summary_file.read_text())
    [verdict] = summary["verdicts"]
    assert verdict["best"] == best
    orig = {q["id"]: q["pass"] for q in res["original"]["results"]}
    b = sum(1 for q in res[best]["results"] if q["pass"] and not orig[q["id"]])
    c = sum(1 for q in res[best]["results"] if not q["pass"] and orig[q["id"]])
    vs = verdict["versus_original"]
    assert (vs["b"], vs["c"]) == (b, c)
    assert vs["p_value"] == pytest.approx(binomtest(b, b + c, 0.5).pvalue if b + c else 1.0, abs=1e-12)
    assert f"exact McNemar p={vs['p_value']:.3g}" in out.stdout

    # the same summary from the store alone: `python -m skilleval.variants.summary`, the
    # function `skilleval diff --sweep` dispatches to
    sid = res["a"]["sweep_id"]
    again = subprocess.run([sys.executable, "-m", "skilleval.variants.summary", "--sweep", sid,
                            "--format", "json"], env=cli.env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["verdicts"] == summary["verdicts"]
    missing = subprocess.run([sys.executable, "-m", "skilleval.variants.summary", "--sweep", "nope"],
                             env=cli.env, capture_output=True, text=True)
    assert missing.returncode == 2 and "no trigger_eval jobs" in missing.stderr


def test_a_resweep_makes_no_new_calls(sweep):
    cli, skill, vfile, *_ = sweep
    n = len(cli.results())
    out = cli.run("-m", "+experiment=trigger_eval", f"skill={skill}", f"variants={vfile}",
                  "variant=glob(*)", "progress=false", check=0)
    new = _results(cli)[n:]
    assert sorted(r["variant"] for r in new) == ["a", "b", "c", "original"]  # glob adds original
    assert [r["calls"]["made"] for r in new] == [0, 0, 0, 0], out.stderr


def test_description_override_leaves_skill_md_byte_identical(tmp_path, skilleval_cli):
    skill = tmp_path / "changelog-writer"
    shutil.copytree(EXAMPLE, skill)
    before = (skill / "SKILL.md").read_bytes()
    text = "Write release notes, changelogs (and $HOME-free prose): summarise merged work, it's fine."
    skilleval_cli.run("+experiment=trigger_eval", f"skill={skill}", f"description={text}",
                      "progress=false", check=0)
    assert (skill / "SKILL.md").read_bytes() == before
    [res] = [json.loads(p.read_text()) for p in skilleval_cli.results()]
    assert res["description"] == text and res["variant"] == "description"


def test_a_1025_character_variant_is_exit_2_before_any_call(tmp_path, skilleval_cli):
    vfile = tmp_path / "v.yaml"
    vfile.write_text(f"ok: Fine words.\ntoo-long: {'x' * 1025}\n")
    out = skilleval_cli.run("-m", "+experiment=trigger_eval", f"variants={vfile}", "variant=ok,too-long",
                            check=2)
    assert "variant 'too-long'" in out.stderr and "1025 characters" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert not list(skilleval_cli.store.rglob("*.parquet"))  # not one call, not one run
    out = skilleval_cli.run("+experiment=trigger_eval", "description=a <b> c", check=2)
    assert "'<' or '>'" in out.stderr


def test_glob_expansion_uses_hydras_glob(tmp_path):
    vfile = tmp_path / "v.yaml"
    vfile.write_text("short: S.\nlong: L.\nlonger: LL.\n")
    assert expand_variant_args(["-m", f"variants={vfile}", "variant=glob(*)"])[-1] == \
        "variant=long,longer,original,short"
    assert expand_variant_args(["--multirun", f"variants={vfile}", "variant=glob(*,exclude=long*)"])[-1] == \
        "variant=original,short"
    assert expand_variant_args([f"variants={vfile}", "variant=glob(sh*)"])[-1] == "variant=short"
    # several without -m: our line, not Hydra's "ambiguous value" quoting a list never typed
    with pytest.raises(UserError, match=r"picks 2 variants \(original, short\): add -m"):
        expand_variant_args([f"variants={vfile}", "variant=glob(*,exclude=long*)"])
    with pytest.raises(UserError, match="matches none"):
        expand_variant_args([f"variants={vfile}", "variant=glob(zz*)"])
    with pytest.raises(UserError, match="needs exactly one variants=FILE"):
        expand_variant_args(["variant=glob(*)"])
    with pytest.raises(UserError) as bad:  # Hydra's two-line grammar error: one line
        expand_variant_args(["-m", f"variants={vfile}", "variant=glob(*"])
    assert "\n" not in str(bad.value) and "no viable alternative at input 'glob(*'; See https" in str(bad.value)


def test_a_folder_of_txt_variants_and_bad_names(tmp_path, skilleval_cli):
    from skilleval.variants.source import load_variants

    d = tmp_path / "vs"
    d.mkdir()
    (d / "terse.txt").write_text("Changelogs from git history.\n")
    (d / "notes.md").write_text("ignored")
    assert load_variants(d) == {"terse": "Changelogs from git history."}
    bad = tmp_path / "bad.yaml"
    bad.write_text("'has space': words\n")
    with pytest.raises(UserError, match="variant name"):
        load_variants(bad)
    out = skilleval_cli.run("+experiment=trigger_eval", f"variants={d}", "variant=nope", check=2)
    assert "variant=nope: not in" in out.stderr
    # an editor's dotfile in the folder is no variant (it was refused as a bad name)
    (d / ".terse.txt").write_text("swap file")
    assert load_variants(d) == {"terse": "Changelogs from git history."}
    # a name given twice kept the last silently; yes/no and 1.0 became True/False and a number
    for text, words in (("short: one desc\nshort: two desc\n", "duplicate key 'short'"),
                        ("yes: Plan tide walks.\n", "read as a bool, not text"),
                        ("1.0: Plan tide walks.\n1: other words.\n", "duplicate key")):
        bad.write_text(text)
        with pytest.raises(UserError, match=words):
            load_variants(bad)
    dup = tmp_path / "dup.json"
    dup.write_text('{"a": "one desc", "a": "two desc"}')
    with pytest.raises(UserError, match="duplicate key 'a'"):
        load_variants(dup)
    # a variant named 'original' silently replaced SKILL.md's own wording under that name
    bad.write_text("original: Plan tide walks.\n")
    out = skilleval_cli.run("+experiment=trigger_eval", f"variants={bad}", "variant=original", check=2)
    assert "may not be named 'original'" in out.stderr and "Traceback" not in out.stderr


def test_trigger_opt_writes_variants_yaml_that_resweeps_from_the_cache(tmp_path, skilleval_cli):
    skilleval_cli.run("+experiment=trigger_opt", "progress=false", "optimize.max_iterations=1",
                      check=0)
    [vfile] = list(skilleval_cli.outputs.rglob("variants.yaml"))
    import yaml

    table = yaml.safe_load(vfile.read_text())
    [opt] = [json.loads(p.read_text()) for p in skilleval_cli.results()]
    assert table["start"] == opt["original_description"] and "original" not in table
    assert table["best"] == opt["best_description"]
    assert {h["description"] for h in opt["history"]} <= set(table.values())
    n = len(skilleval_cli.results())
    first = skilleval_cli.run("-m", "+experiment=trigger_eval", f"variants={vfile}", "variant=glob(*)",
                              "progress=false", check=0)
    made = [json.loads(p.read_text())["calls"] for p in skilleval_cli.results()[n:]]
    assert len(made) == len(set(table) | {"original"})
    assert sum(c["cached"] for c in made) > 0, first.stderr  # trigger_opt's trials reused
    n = len(skilleval_cli.results())
    skilleval_cli.run("-m", "+experiment=trigger_eval", f"variants={vfile}", "variant=glob(*)",
                      "progress=false", check=0)
    assert [json.loads(p.read_text())["calls"]["made"] for p in skilleval_cli.results()[n:]] == \
        [0] * len(made)


def test_diff_sweep_bad_usage_is_one_line(skilleval_cli) -> None:  # noqa: ANN001
    """`diff --sweep` parsed with plain argparse: a usage dump plus an error, not one line."""
    for argv in (["diff", "--sweep"], ["diff", "--sweep", "x", "--bogus"]):
        r = skilleval_cli.run(*argv)
        assert r.returncode == 2, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "diff --sweep" in r.stderr, r.stderr


def test_a_sweep_over_two_skills_shows_each_skills_numbers_under_its_name(make_skilleval_cli, tmp_path):
    """skill=a,b backend.model=z1,z2 printed one unnamed "original" row holding the second
    skill's accuracy (the first's jobs overwritten, "the last one is shown")."""
    cli = make_skilleval_cli(tmp_path)
    skills = [REPO / "experiments" / n for n in ("csv-tidy", "recipe-scaler")]
    out = cli.run("-m", "+experiment=trigger_eval", f"skill={skills[0]},{skills[1]}",
                  "backend.model=z1,z2", "trigger.runs=1", "progress=false")
    acc = {(r["skill_name"], r["model"]): (sum(q["pass"] for q in r["results"]), len(r["results"]))
           for r in _results(cli)}
    [summary_file] = list(cli.outputs.rglob("sweep_summary.json"))
    summary = json.loads(summary_file.read_text())
    assert summary["skills"] == ["csv-tidy", "recipe-scaler"]
    cells = {(c["skill"], c["model"]): (c["accuracy"]["k"], c["accuracy"]["n"]) for c in summary["cells"]}
    assert cells == acc and len(cells) == 4
    assert {(v["skill"], v["model"]) for v in summary["verdicts"]} == set(acc)
    assert "was measured by more than one job" not in out.stdout
    for skill in ("csv-tidy", "recipe-scaler"):
        assert f"of {skill} by variant × model" in out.stdout
