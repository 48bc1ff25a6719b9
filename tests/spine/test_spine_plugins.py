"""The plugin contract: documented hooks, strict validation, and a real third-party package."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import pluggy
import pytest
from shared_helpers import install_plugin

from skilleval import hookspecs
from skilleval.errors import UserError
from skilleval.registry import collect, get_plugin_manager
from spine_helpers import CSV_DESCRIPTION, SMALL_CASES, fake_plugin, write_cases, write_skill


def _hookspec_functions() -> list:
    marker = f"{hookspecs.PROJECT}_spec"
    return [f for _, f in inspect.getmembers(hookspecs, inspect.isfunction) if hasattr(f, marker)]


def test_every_hook_has_a_docstring() -> None:
    specs = _hookspec_functions()
    names = {f.__name__ for f in specs}
    assert {"register_backends", "register_splitters", "register_reporters", "register_proposers",
            "register_judges", "register_experiments", "on_job_start", "on_job_end"} <= names
    for f in specs:
        assert f.__doc__ and len(f.__doc__.strip()) > 20, f"hook {f.__name__} has no docstring"
    assert hookspecs.__doc__ and "entry-point" in hookspecs.__doc__


def test_check_pending_rejects_a_misspelled_hook() -> None:
    pm = get_plugin_manager()

    class Misspelled:
        @hookspecs.hookimpl
        def register_backend(self, register) -> None:  # noqa: ANN001 - missing the "s"
            register("typo", object)

    pm.register(Misspelled(), name="misspelled")
    with pytest.raises(pluggy.PluginValidationError, match="register_backend"):
        pm.check_pending()


def test_a_registered_plugin_object_is_collected_and_clashes_are_named() -> None:
    pm = get_plugin_manager()

    class Good:
        @hookspecs.hookimpl
        def register_reporters(self, register) -> None:  # noqa: ANN001
            register("nothing", lambda params: None, help="does nothing")

    pm.register(Good(), name="good-test-plugin")
    pm.check_pending()
    registry = collect(pm)
    assert registry.get("reporter", "nothing").plugin == "good-test-plugin"
    assert "stub" in registry.names("backend")
    with pytest.raises(UserError, match="valid names: .*stub"):
        registry.get("backend", "nope")

    class Clash:
        @hookspecs.hookimpl
        def register_backends(self, register) -> None:  # noqa: ANN001
            register("stub", lambda params: None)

    pm.register(Clash(), name="clashing-plugin")
    clashed = collect(pm)  # the first registration stays; a run refuses to start
    assert clashed.get("backend", "stub").plugin != "clashing-plugin"
    with pytest.raises(UserError, match="registered twice.*clashing-plugin"):
        clashed.require_unique()


def test_a_clashing_plugin_leaves_help_and_plugins_answering(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """A plugin registering backend 'stub' again took down `--help` and `skilleval plugins`
    (the command that would show it) with the run: both exited 2 with the clash alone."""
    env = fake_plugin(tmp_path, "clash", "from skilleval import hookimpl\n@hookimpl\n"
                      "def register_backends(register):\n    register('stub', object, help='x')\n")
    r = skilleval_cli.run("plugins", env=env, check=2)
    assert "registered twice" in r.stderr and "backend" in r.stdout and "reporter" in r.stdout, r.stdout
    r = skilleval_cli.run("--help", env=env, check=0)
    assert "registered twice" in r.stderr and "+experiment=" in r.stdout, r.stdout[-500:]
    r = skilleval_cli.run("+experiment=trigger_eval", env=env, check=2)
    assert "registered twice" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = install_plugin("skilleval-example-plugin", tmp_path_factory.mktemp("plugin"))
    assert (site / "skilleval_example_plugin").is_dir()
    return site


def test_third_party_plugin_is_listed(plugin_site: Path, skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("plugins", "--format", "json", env={"PYTHONPATH": str(plugin_site)}, check=0)
    regs = {(x["kind"], x["name"]): x for x in json.loads(r.stdout)}
    for key in [("backend", "keyword"), ("reporter", "md_table")]:
        assert regs[key]["distribution"] == "skilleval-example-plugin"
        assert regs[key]["version"] == "0.1.0"
    assert ("backend", "stub") in regs
    # without the plugin on the path it is not there
    plain = skilleval_cli.run("plugins", "--format", "json", check=0)
    assert "keyword" not in {x["name"] for x in json.loads(plain.stdout)}


def test_third_party_plugin_used_through_config(plugin_site: Path, skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    skill = write_skill(tmp_path, "csv-tidy", CSV_DESCRIPTION)
    cases = write_cases(tmp_path / "cases.json", SMALL_CASES + [("tidy this csv", True)])
    env = {"PYTHONPATH": str(plugin_site)}
    r = skilleval_cli.run("+experiment=trigger_eval", "progress=false", "backend=keyword",
                          "reporter=[console,md_table]", "trigger.runs=1", f"skill={skill}",
                          f"cases={cases}", "backend.min_words=1", env=env, check=0)
    assert "per-query trigger rates" in r.stdout
    [md] = list(skilleval_cli.outputs.rglob("results.md"))
    text = md.read_text()
    assert text.startswith("# csv-tidy")
    assert "| tidy this csv | True | 1.00 | pass |" in text
    assert "| write a haiku about autumn leaves | False | 0.00 | pass |" in text
    assert not list(skilleval_cli.outputs.rglob("results.json"))  # json reporter not selected
    rows = skilleval_cli.run("sql", "select distinct backend from trials", "--format", "json", env=env, check=0)
    assert json.loads(rows.stdout) == [{"backend": "keyword"}]
    # a typo in the plugin's own parameters is a config error naming it
    bad = skilleval_cli.run("+experiment=trigger_eval", "progress=false", "backend=keyword",
                            "backend.min_wordz=1", f"skill={skill}", f"cases={cases}", env=env)
    assert bad.returncode == 2 and "min_wordz" in bad.stderr and "Traceback" not in bad.stderr


def test_a_new_plugin_release_does_not_reuse_the_old_releases_trials(plugin_site: Path, skilleval_cli,
                                                                     tmp_path: Path) -> None:  # noqa: ANN001
    """The cache key held only the backend's own identity(), which a plugin need not change
    between releases: version 0.3.0 of a plugin answered 40 of 40 trials from 0.1.0's cache."""
    import shutil

    skill = write_skill(tmp_path, "csv-tidy", CSV_DESCRIPTION)
    cases = write_cases(tmp_path / "cases.json", SMALL_CASES)
    args = ("+experiment=trigger_eval", "progress=false", "backend=keyword", "trigger.runs=1",
            f"skill={skill}", f"cases={cases}", "reporter=[json]")
    skilleval_cli.run(*args, env={"PYTHONPATH": str(plugin_site)}, check=0)
    newer = tmp_path / "site-0.2.0"
    shutil.copytree(plugin_site, newer)
    [info] = list(newer.glob("skilleval_example_plugin-*.dist-info"))
    meta = info / "METADATA"
    meta.write_text(meta.read_text().replace("Version: 0.1.0", "Version: 0.2.0"))
    skilleval_cli.run(*args, env={"PYTHONPATH": str(newer)}, check=0)
    skilleval_cli.run(*args, env={"PYTHONPATH": str(newer)}, check=0)  # the same release: cached
    made = [json.loads(p.read_text())["calls"]["made"] for p in sorted(skilleval_cli.results())]
    assert made[0] == len(SMALL_CASES) and made[1] == len(SMALL_CASES) and made[2] == 0, made


def test_a_reporter_that_raises_leaves_the_other_reports_and_exits_3(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """A plugin reporter that raised stopped the run with a traceback before results.json
    was written, every trial measured, status 'failed'."""
    env = fake_plugin(tmp_path, "boom", (
        "from skilleval import hookimpl\n"
        "class Boom:\n"
        "    name = 'boom'\n"
        "    def __init__(self, params=None): pass\n"
        "    def report(self, job, kind, payload): raise RuntimeError('disk full')\n"
        "@hookimpl\ndef register_reporters(register):\n    register('boom', Boom, help='x')\n"))
    r = skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false",
                          "reporter=[boom,json]", env=env, check=3)
    assert "Traceback" not in r.stderr
    assert "skilleval: error: reporter boom failed: RuntimeError: disk full" in r.stderr, r.stderr
    assert skilleval_cli.results(), "the json reporter after it must still write"
