"""The suite's `skilleval` runner (tests/forked_cli.py) forks commands from a warm server. These
check that a forked command is the command a fresh interpreter runs: the same exit code, the same
streams, the same results, the same files; that a timeout kills it and leaves the server usable;
and that a request with another start-up environment goes to a server started with it."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

import forked_cli


def fresh(cli, *args: str) -> subprocess.CompletedProcess[str]:  # noqa: ANN001
    return forked_cli.fresh(list(args), cwd=cli.cwd, env=cli.env, timeout=120)


def forked(cli, *args: str) -> subprocess.CompletedProcess[str]:  # noqa: ANN001
    server = forked_cli.server(cli.env)
    return server.run(list(args), cwd=cli.cwd, env=cli.env, timeout=120)


def normalised(text: str, cli) -> str:  # noqa: ANN001
    """`text` with the run's own folder and the clock's output folder stamps written alike."""
    text = text.replace(str(cli.cwd), "ROOT")
    return re.sub(r"\d{4}-\d\d-\d\d/\d\d-\d\d-\d\d-\d+", "STAMP", text)


@pytest.mark.parametrize("args", [
    ["--version"],
    ["+experiment=trigger_eval", "trigger.rnus=3"],  # refused: exit 2, one line
    ["+experiment=trigger_eval", "skill=no-such-skill"],
    ["sql", "select 1 as one"],
])
def test_a_forked_command_prints_and_exits_as_a_fresh_one(make_skilleval_cli, tmp_path, args) -> None:  # noqa: ANN001
    a, b = make_skilleval_cli(tmp_path / "fresh"), make_skilleval_cli(tmp_path / "forked")
    want, got = fresh(a, *args), forked(b, *args)
    assert got.returncode == want.returncode
    assert normalised(got.stdout, b) == normalised(want.stdout, a)
    assert normalised(got.stderr, b) == normalised(want.stderr, a)


def test_a_forked_run_stores_and_reports_what_a_fresh_run_does(make_skilleval_cli, tmp_path) -> None:  # noqa: ANN001
    args = ["+experiment=trigger_eval", "trigger.runs=1", "progress=false"]
    a, b = make_skilleval_cli(tmp_path / "fresh"), make_skilleval_cli(tmp_path / "forked")
    want, got = fresh(a, *args), forked(b, *args)
    assert (got.returncode, want.returncode) == (0, 0), got.stderr + want.stderr
    assert normalised(got.stdout, b) == normalised(want.stdout, a)

    def results(cli) -> list:  # noqa: ANN001
        return json.loads(next(cli.outputs.rglob("results.json")).read_text())["results"]
    assert results(b) == results(a)
    def tables(cli) -> list[str]:  # noqa: ANN001 - the stored tables, each part counted
        return sorted(p.relative_to(cli.store).parts[0] for p in cli.store.rglob("*.parquet"))
    assert tables(b) and tables(b) == tables(a)


def test_a_timeout_kills_the_command_and_the_server_goes_on(make_skilleval_cli, tmp_path) -> None:  # noqa: ANN001
    cli = make_skilleval_cli(tmp_path)
    server = forked_cli.server(cli.env)
    with pytest.raises(subprocess.TimeoutExpired):
        server.run(["serve-sim", "--port", "0"], cwd=cli.cwd, env=cli.env, timeout=3)
    assert server.run(["--version"], cwd=cli.cwd, env=cli.env, timeout=60).returncode == 0


def test_each_start_up_environment_has_its_own_server(make_skilleval_cli, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """A request forks from a server started with its own PYTHON* variables, whichever
    environment the test process had when it first asked (a test may put a hook on
    PYTHONPATH for one command). Checked with forking on, also in a run of the suite that
    turns it off (SKILLEVAL_TESTS_FRESH_PROCESSES=1)."""
    monkeypatch.delenv("SKILLEVAL_TESTS_FRESH_PROCESSES", raising=False)
    cli = make_skilleval_cli(tmp_path)
    seeded = {**cli.env, "PYTHONHASHSEED": "123"}
    plain, other = forked_cli.server(cli.env), forked_cli.server(seeded)
    assert other is not plain and other.env["PYTHONHASHSEED"] == "123"
    assert forked_cli.server(dict(seeded)) is other  # started once
    before = (plain.runs, other.runs)
    assert forked_cli.run(["--version"], cwd=cli.cwd, env=seeded, timeout=60).returncode == 0
    assert (plain.runs, other.runs) == (before[0], before[1] + 1)
