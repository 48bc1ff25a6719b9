"""A faulty third-party plugin breaks only itself: a registration hook that raises, or a params
dataclass Hydra cannot type, used to take down `--version`, `--help`, `skilleval plugins` and
every run with a traceback (tests/spine/test_spine_plugins.py has the import failure)."""
from __future__ import annotations

import json
from pathlib import Path

from shared_helpers import one_line_error
from spine_helpers import CSV_DESCRIPTION, SMALL_CASES, fake_plugin, write_cases, write_skill


def _stub_run(cli, tmp: Path, env: dict[str, str], *extra: str):  # noqa: ANN001, ANN202
    skill = write_skill(tmp, "csv-tidy", CSV_DESCRIPTION)
    cases = write_cases(tmp / "cases.json", SMALL_CASES)
    return cli.run("+experiment=trigger_eval", "progress=false", "trigger.runs=1", f"skill={skill}",
                   f"cases={cases}", *extra, env=env)


RAISING = """
from skilleval import hookimpl

@hookimpl
def register_judges(register):
    register("hookraise_judge", lambda p: None, help="registered before the raise")

@hookimpl
def register_backends(register):
    raise RuntimeError("hookraise exploded")
"""


def test_a_registration_hook_that_raises_is_a_load_failure(skilleval_cli, tmp_path: Path) -> None:
    env = fake_plugin(tmp_path, "hookraise", RAISING)
    r = skilleval_cli.run("--version", env=env, check=0)
    assert "Traceback" not in r.stderr, r.stderr
    assert "hookraise: failed to load" in r.stdout and "hookraise exploded" in r.stdout, r.stdout
    warning = one_line_error(r, 0)
    assert "plugin 'hookraise'" in warning and "failed to load" in warning, warning
    r = skilleval_cli.run("plugins", "--format", "json", env=env, check=2)
    names = {x["name"] for x in json.loads(r.stdout)}
    assert "stub" in names and "hookraise_judge" not in names  # none of its registrations kept
    r = skilleval_cli.run("--help", env=env, check=0)
    assert "+experiment=" in r.stdout and "Traceback" not in r.stderr
    r = _stub_run(skilleval_cli, tmp_path, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "per-query trigger rates" in r.stdout


UNTYPABLE = """
from dataclasses import dataclass, field
from typing import Literal
from skilleval import hookimpl
from skilleval.backends.stub import StubBackend

@dataclass
class RequiredParams:
    api_key: str

@dataclass
class SetParams:
    tags: set[str] = field(default_factory=set)

@dataclass
class LiteralParams:
    style: Literal["a", "b"] = "a"

class NotDataclass:
    n: int = 3

@dataclass
class GoodParams:
    n: int = 3

@hookimpl
def register_backends(register):
    register("wb_required", StubBackend, params=RequiredParams, help="required")
    register("wb_set", StubBackend, params=SetParams, help="set")
    register("wb_lit", StubBackend, params=LiteralParams, help="lit")
    register("wb_notdc", StubBackend, params=NotDataclass, help="notdc")

@hookimpl
def register_reporters(register):
    register("wb_good", lambda p: None, params=GoodParams, help="fine")
"""


def test_params_hydra_cannot_type_make_only_that_component_unusable(skilleval_cli, tmp_path: Path) -> None:
    env = fake_plugin(tmp_path, "untypable", UNTYPABLE)
    r = skilleval_cli.run("--help", env=env, check=0)
    assert "Traceback" not in r.stderr and "+experiment=" in r.stdout, r.stderr[-2000:]
    warnings = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(warnings) == 4, r.stderr
    for name, field in (("wb_required", "api_key"), ("wb_set", "tags"), ("wb_lit", "style"),
                        ("wb_notdc", "NotDataclass")):
        [line] = [w for w in warnings if repr(name) in w]
        assert "plugin 'untypable'" in line and field in line, line
    r = skilleval_cli.run("plugins", "--format", "json", env=env, check=2)
    regs = {x["name"]: x for x in json.loads(r.stdout)}
    assert "no default" in regs["wb_required"]["help"] and "UNUSABLE" in regs["wb_lit"]["help"]
    assert "UNUSABLE" not in regs["wb_good"]["help"] and "stub" in regs
    r = skilleval_cli.run("plugins", env=env, check=2)  # the table says it too
    assert "UNUSABLE" in r.stdout
    # the rest works: a run on the stub backend
    r = _stub_run(skilleval_cli, tmp_path, env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    # using the broken one: exit 2, one line naming it (plus the warnings made at start)
    r = _stub_run(skilleval_cli, tmp_path, env, "backend=wb_lit")
    errors = [ln for ln in r.stderr.splitlines() if "error" in ln]
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(errors) == 1 and "wb_lit" in errors[0] and "style" in errors[0], r.stderr


BADNAMES = """
from skilleval import hookimpl
from skilleval.backends.stub import StubBackend
from skilleval.backends.params import StubParams

@hookimpl
def register_backends(register):
    register("has space", StubBackend, params=StubParams, help="space")
    register("sub/group", StubBackend, params=StubParams, help="slash")
    register("fine-name_2", StubBackend, params=StubParams, help="fine")
"""


def test_plugins_exits_2_on_unusable_names_and_load_failures(skilleval_cli, tmp_path: Path) -> None:
    """A name Hydra cannot select is unusable (listed, never published); `skilleval plugins`
    exits 2 when anything installed is unusable or failed to load (it exited 0)."""
    env = fake_plugin(tmp_path, "badnames", BADNAMES)
    r = skilleval_cli.run("plugins", "--format", "json", env=env, check=2)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    regs = {x["name"]: x for x in json.loads(r.stdout)}
    assert "cannot be selected" in regs["has space"]["problem"]
    assert "cannot be selected" in regs["sub/group"]["problem"]
    assert regs["fine-name_2"]["problem"] is None and regs["stub"]["problem"] is None
    assert "2 unusable component(s)" in r.stderr, r.stderr
    r = _stub_run(skilleval_cli, tmp_path, env, "backend=fine-name_2")  # the rest works
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    env = fake_plugin(tmp_path, "hookraise", RAISING)
    r = skilleval_cli.run("plugins", env=env, check=2)
    assert r.returncode == 2 and "1 plugin(s) failed to load" in r.stderr, r.stderr
    r = skilleval_cli.run("plugins", check=0)  # the bundled install is clean
    assert r.returncode == 0, r.stderr


def test_load_plugins_variable_limits_third_party_plugins_only(skilleval_cli, tmp_path: Path) -> None:
    """SKILLEVAL_LOAD_PLUGINS picks third-party plugins; the built-ins always load (naming one
    plugin left out the built-in executor the defaults select: --help and runs failed)."""
    env = fake_plugin(tmp_path, "badnames", BADNAMES)
    for chosen, loaded in (("badnames", True), ("", False), ("nosuch", False)):
        run_env = {**env, "SKILLEVAL_LOAD_PLUGINS": chosen}
        r = skilleval_cli.run("--help", env=run_env, check=0)
        assert "+experiment=" in r.stdout and "Traceback" not in r.stderr, r.stderr
        assert ("nosuch" in r.stderr) == (chosen == "nosuch"), r.stderr
        r = skilleval_cli.run("plugins", "--format", "json", env=run_env, check=2 if loaded else 0)
        names = {x["name"] for x in json.loads(r.stdout)}
        assert {"stub", "local", "trigger_eval"} <= names and ("fine-name_2" in names) == loaded
        r = _stub_run(skilleval_cli, tmp_path, run_env)
        assert r.returncode == 0, r.stdout + r.stderr


EXPLODING = """
from skilleval import hookimpl

def _factory(params):
    raise RuntimeError("factory exploded")

@hookimpl
def register_backends(register):
    register("exploding_backend", _factory, help="raises when built")
"""


def test_a_factory_that_raises_is_one_line_naming_the_plugin(skilleval_cli, tmp_path: Path) -> None:
    """It was a traceback and exit 1; a plugin's bug is not ours to dump on the user."""
    env = fake_plugin(tmp_path, "exploding", EXPLODING)
    r = _stub_run(skilleval_cli, tmp_path, env, "backend=exploding_backend")
    assert r.returncode == 3, r.stdout + r.stderr
    line = one_line_error(r, 3)
    assert "'exploding_backend' from plugin 'exploding' (exploding 0.1) failed to build" in line, line
    assert "RuntimeError: factory exploded" in line
