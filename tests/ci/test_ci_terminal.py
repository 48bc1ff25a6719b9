"""Issue 11, the terminal: progress under a pseudo-terminal and in a pipe, Ctrl-C, typos,
--version, `sql` when piped. Real subprocesses throughout."""
from __future__ import annotations

import os
import re
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shared_helpers import interrupt_once_running, start_interruptible

# slow enough that the run takes a few seconds on the stub: 20 queries x 2 runs at 150 ms
SLOW = ["+experiment=trigger_eval", "backend.latency_ms=150", "trigger.concurrency=2", "trigger.runs=2"]


def _env(cli) -> dict[str, str]:  # noqa: ANN001
    env = dict(cli.env)
    env.pop("NO_COLOR", None)
    env.update(TERM="xterm-256color", COLUMNS="120")
    return env


OPT = ["+experiment=trigger_opt", "backend.latency_ms=100", "optimize.max_iterations=1"]


@pytest.mark.parametrize("args", [SLOW, OPT], ids=["trigger_eval", "trigger_opt"])
def test_progress_bar_under_a_pseudo_terminal(skilleval_cli, args) -> None:  # noqa: ANN001
    """stdout and stderr are a real pty: rich draws its bar (the runner finds the open
    display even though it was built before it)."""
    shown, code = _under_a_pty(skilleval_cli, args, timeout=120)
    assert code == 0
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)
    # the progress row: M of N queries, then the elapsed-time column (tables have neither)
    assert re.search(r"\b\d+/\d+ +\d:\d\d:\d\d", text), text[-2000:]


def test_plain_progress_lines_when_not_a_terminal(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run(*SLOW, "progress_every=0.3", check=0)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("progress: trigger_eval:")]
    assert len(lines) >= 2, r.stderr
    assert "/20" in lines[-1] and "━" not in r.stderr


def test_ctrl_c_stops_with_one_line_and_marks_the_run(skilleval_cli) -> None:  # noqa: ANN001
    proc = start_interruptible([sys.executable, "-m", "skilleval.cli", *SLOW, "progress_every=0.2"],
                               cwd=skilleval_cli.cwd, env=skilleval_cli.env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    seen = interrupt_once_running(proc)
    _, err = proc.communicate(timeout=60)
    err = "".join(seen) + err
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert sum("interrupted" in ln for ln in err.splitlines()) == 1
    status = skilleval_cli.run("sql", "select status from runs", "--format", "csv", check=0).stdout
    assert status.split() == ["status", "interrupted"]
    trials = skilleval_cli.run("sql", "select count(*) n from trials", "--format", "csv", check=0).stdout
    assert int(trials.split()[1]) > 0  # finished trials were kept


def test_an_interrupted_run_counts_the_trials_it_reused(skilleval_cli) -> None:  # noqa: ANN001
    """A second interrupted run reused the first one's trials, and its row said 0 cached
    (the totals are booked when an experiment ends; the runners count them as they go)."""
    for _ in range(2):
        proc = start_interruptible([sys.executable, "-m", "skilleval.cli", *SLOW, "progress_every=0.2"],
                                   cwd=skilleval_cli.cwd, env=skilleval_cli.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        interrupt_once_running(proc, settle_s=0.8)
        proc.communicate(timeout=60)
        assert proc.returncode == 130
    rows = skilleval_cli.run("sql", "select r.status, r.calls_cached, (select count(*) from trials_all t "
                             "where t.run_id = r.run_id) stored from runs r order by ts",
                             "--format", "csv", check=0).stdout.split()[1:]
    first, second = (r.split(",") for r in rows)
    assert first[0] == second[0] == "interrupted"
    assert int(second[1]) >= int(first[2]) > 0, rows  # every trial the first run stored


def test_mistyped_key_gets_did_you_mean(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("+experiment=trigger_eval", "trigger.run=3", check=2)
    assert "did you mean trigger.runs?" in r.stderr and "+trigger.run" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    # the "+key" route Hydra used to suggest is refused too, instead of silently ignored;
    # plugin parameters, reporters' fields and top-level keys are checked the same way
    from skilleval.errors import UserError
    from skilleval.strict import check_overrides

    for arg, hint in [("+trigger.run=3", "trigger.runs"), ("gate.min_recal=0.5", "gate.min_recall"),
                      ("backend.latncy_ms=5", "backend.latency_ms"), ("skil=x", "skill"),
                      ("reporter.junit.filenme=x", "reporter.junit.filename"),
                      # an experiment's own section (attribute:, draft:) and a mistyped section
                      ("draft.nn=3", "draft.n"), ("atribute.exact_max=3", "attribute.exact_max")]:
        with pytest.raises(UserError, match=f"did you mean {hint}\\?"):
            check_overrides(["+experiment=trigger_eval", arg])
    for arg, message in [("attribute.foo=1", r"unknown key attribute\.foo .*valid: bootstrap, exact_max"),
                         # the nearest spelling may be another setting: the small group is listed
                         ("gate.min_f1=0.5", r"did you mean gate\.min_delta\? valid: .*min_recall"),
                         ("+nosuch.key=1", r"unknown key nosuch\.key in '\+nosuch\.key=1'$"),
                         ("skill.x=1", r"skill takes one value")]:
        with pytest.raises(UserError, match=message):
            check_overrides(["+experiment=attribute", arg])
    check_overrides(["+experiment=trigger_eval", "trigger.runs=3", "gate.on=lower", "seed=1",
                     "backend=stub", "backend.latency_ms=5", "hydra.run.dir=x", "-m",
                     "attribute.exact_max=2", "draft.n=5", "experiment.name=x"])


def test_own_experiment_sections_are_checked_too(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """A user's experiment in ./conf/experiment (the search path) may define its own section;
    its keys are accepted and a typo in them is refused like any other."""
    from skilleval.errors import UserError
    from skilleval.strict import check_overrides

    (tmp_path / "conf" / "experiment").mkdir(parents=True)
    (tmp_path / "conf" / "experiment" / "mine.yaml").write_text(
        "# @package _global_\nexperiment:\n  name: mine\n  kind: trigger_eval\nmine:\n  depth: 3\n")
    monkeypatch.chdir(tmp_path)
    check_overrides(["+experiment=mine", "mine.depth=4"])
    with pytest.raises(UserError, match=r"did you mean mine\.depth\?"):
        check_overrides(["+experiment=mine", "mine.dept=4"])


def test_version_lists_plugins(skilleval_cli) -> None:  # noqa: ANN001
    from importlib import metadata

    r = skilleval_cli.run("--version", check=0)
    first = r.stdout.splitlines()[0]
    assert first == f"skilleval {metadata.version('skilleval')}"
    assert "reporter=junit" in r.stdout and "backend=stub" in r.stdout


def test_sql_is_readable_when_piped(default_trigger_run) -> None:  # noqa: ANN001
    r = default_trigger_run.cli.run("sql", "select query, description, skill, verdict from queries",
                                    env={"COLUMNS": "60"}, check=0)
    assert "…" not in r.stdout
    assert "Helps with project documentation tasks." in r.stdout


def test_default_example_says_it_is_weak_on_purpose(default_trigger_run) -> None:  # noqa: ANN001
    r = default_trigger_run.proc
    assert "weak on purpose" in r.stdout + r.stderr and "trigger_opt" in r.stdout + r.stderr
    assert Path(default_trigger_run.cli.results()[-1]).is_file()


def _under_a_pty(cli, args: list[str], env: dict[str, str] | None = None,  # noqa: ANN001
                 timeout: float = 60) -> tuple[str, int]:
    """What `skilleval ARGS` writes to a terminal (stdout and stderr on one pty), and its
    exit code."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "skilleval.cli", *args], cwd=cli.cwd,
                            env={**_env(cli), **(env or {})}, stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, close_fds=True)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace"), proc.wait(timeout=30)


def test_sql_csv_and_json_show_stored_control_characters_on_a_terminal(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    """`sql --format csv` wrote a stored query's ESC[2J (clear screen) and OSC title to the
    terminal as they were; piped, the bytes stay exact (data for programs)."""
    import json as _json

    cases = tmp_path / "cases.json"
    hostile = "update CHANGELOG.md \x1b[2J\x1b]0;PWNED\x07 \x9b31m now"
    cases.write_text(_json.dumps([{"query": hostile, "should_trigger": True},
                                  {"query": "what is 2 + 2?", "should_trigger": False}]))
    skilleval_cli.run("+experiment=trigger_eval", f"cases={cases}", "trigger.runs=1", check=0)
    sql = ["sql", "select query from queries where should_trigger"]
    for fmt in ("csv", "json"):
        shown, _ = _under_a_pty(skilleval_cli, [*sql, "--format", fmt])
        assert "\x1b[2J" not in shown and "\x07" not in shown and "\x9b" not in shown, repr(shown)
        assert "PWNED" in shown, repr(shown)
    piped = skilleval_cli.run(*sql, "--format", "csv", check=0).stdout
    assert hostile in piped


def test_a_plugin_load_failure_message_cannot_drive_the_terminal(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    site = tmp_path / "site"
    (site / "evilplug").mkdir(parents=True)
    (site / "evilplug" / "__init__.py").write_text('raise ImportError("evil \\x1b[2J\\x1b]0;PWNED\\x07 done")\n')
    info = site / "evilplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evilplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[skilleval]\nevilplug = evilplug\n")
    r = skilleval_cli.run("plugins", env={"PYTHONPATH": str(site)}, check=2)
    assert "failed to load" in r.stderr and "PWNED" in r.stderr, r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr and "\\x1b[2J" in r.stderr, repr(r.stderr)


@pytest.mark.parametrize("both", [False, True], ids=["stdout", "stdout-and-stderr"])
def test_a_run_piped_into_head_finishes_as_it_would_have(skilleval_cli, both: bool) -> None:  # noqa: ANN001
    """`skilleval +experiment=... | head -1`: the reader left after one line, and a run whose
    trials and results.json were written was marked failed and exited 2 (or 1)."""
    proc = subprocess.Popen([sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval", "progress=false",
                             "trigger.runs=1"], cwd=skilleval_cli.cwd, env=skilleval_cli.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if both else subprocess.DEVNULL)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()  # what head does after its line
    assert proc.wait(timeout=120) == 0
    r = skilleval_cli.run("sql", "select status from runs", "--format", "csv", check=0)
    assert r.stdout.split() == ["status", "done"], r.stdout


def test_config_errors_say_why_and_how(skilleval_cli) -> None:  # noqa: ANN001
    """Hydra's "Could not override 'optimize.apply'." / "Could not load 'reporter/nosuch'."
    said neither why nor what to write instead."""
    cases = [(("+experiment=trigger_eval", "optimize.apply=true"),
              "optimize.apply: this experiment has no optimize settings (optimize.* belongs to "
              "+experiment=trigger_opt)"),
             (("+experiment=functional_eval", "functional.arm_overrides={without_skill:{max_turns:5}}"),
              "needs a leading +, as in +functional.arm_overrides={without_skill:{max_turns:5}}"),
             (("+experiment=trigger_eval", "reporter=[console,nosuch]"),
              "reporter 'nosuch' does not exist (valid: console, json, junit, markdown)"),
             # a setting of a reporter the run does not use: not the + form (nothing reads it)
             (("+experiment=trigger_eval", "reporter.junit.filename=x.xml"),
              "junit is not one of this run's reporters; add it, as in reporter=[console,junit]"),
             # a value of the wrong type said "Error merging override" and no more
             (("+experiment=trigger_eval", "backend.latency_ms=abc"),
              "backend.latency_ms=abc: Value 'abc' of type 'str' could not be converted to Float")]
    for args, words in cases:
        r = skilleval_cli.run(*args, check=2)
        assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
