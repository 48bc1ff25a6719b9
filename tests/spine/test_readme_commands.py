"""Every `skilleval` line in README.md's code blocks still parses, without running a trial.

A Hydra line (an experiment) is composed with ``--cfg job`` (groups, options and our strict
keys are checked; nothing runs) and the composed config goes through the value checks a run
makes before its first call; a sweep is checked as its first cell. A verb line is checked
against ``skilleval VERB --help``: the verb answers and knows every option the line uses.
Placeholders are replaced as a newcomer would (a skill folder, an eval set, a variants file).
The lines were also run for real, by hand, when this test was written (branch readme-walk)."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from shared_helpers import start_interruptible

REPO = Path(__file__).resolve().parents[2]


def _readme_lines() -> list[str]:
    """The `skilleval ...` commands of README.md's bash blocks, one per `&&` part."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value prefixes
                    words = words[1:]
                if words[:1] == ["skilleval"]:
                    out.append(shlex.join(words))
    return out


LINES = _readme_lines()


def _substitute(words: list[str], root: Path) -> list[str]:
    """README's placeholders, as a newcomer fills them in (a whole value, or a host:port)."""
    files = {"path/to/my-skill": root / "my-skill", "my-skill": root / "my-skill",
             "my_evals.json": root / "my_evals.json", "v.yaml": root / "v.yaml",
             "FILE": REPO / "experiments" / "routing" / "cases.json"}
    out = []
    for w in words:
        w = w.replace(":PORT", ":8765").replace("=HEAD:", "=127.0.0.1:")
        key, eq, value = w.partition("=")
        if eq and value in files:
            w = f"{key}={files[value]}"
        elif w in files:
            w = str(files[w])
        out.append(w)
    return out


def _first_cell(words: list[str]) -> list[str]:
    """A sweep's first cell: no -m, each comma list's first value, a glob as one variant."""
    out = []
    for w in words:
        if w == "-m":
            continue
        key, eq, value = w.partition("=")
        if eq and value == "glob(*)":
            value = "short"
        elif eq and "," in value and not value.startswith("["):
            value = value.split(",")[0]
        out.append(f"{key}={value}" if eq else w)
    return out


@pytest.fixture(scope="module")
def newcomer(make_skilleval_cli, tmp_path_factory):  # noqa: ANN001, ANN201
    cli = make_skilleval_cli(tmp_path_factory.mktemp("readme"))
    shutil.copytree(REPO / "experiments" / "csv-tidy", cli.cwd / "my-skill")
    (cli.cwd / "my_evals.json").write_text('[{"query": "dedupe a.csv", "should_trigger": true}]')
    (cli.cwd / "v.yaml").write_text("short: Clean messy CSV files.\n")
    return cli


def test_readme_shows_the_commands_it_should() -> None:
    assert "skilleval +experiment=trigger_opt" in LINES
    assert len(LINES) >= 30, LINES  # the parser found the blocks


# One Python process checks every line (`skilleval.cli.main` per line, its exit code caught):
# a process per line took ~40 s on the shared 2-core machine, this takes ~2 s.
# A composed job config then goes through the checks a run makes before its first call
# (config_checks.check_job_config, the gate settings).
_DRIVER = """
import contextlib, io, json, sys
from omegaconf import OmegaConf
from skilleval.cli import main
from skilleval.config_checks import check_job_config
from skilleval.errors import UserError
from skilleval.gates import settings
out = []
for argv in json.load(sys.stdin):
    so, se = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:  # a traceback is a failure too
            code = f"raised {type(exc).__name__}: {exc}"
    if code == 0 and argv[-2:] == ["--cfg", "job"]:
        try:
            cfg = OmegaConf.create(so.getvalue())
            check_job_config(cfg)
            settings(cfg)
        except UserError as exc:
            code, se = 2, io.StringIO(f"config check: {exc}")
    out.append({"code": code, "stdout": so.getvalue(), "stderr": se.getvalue()})
print(json.dumps(out))
"""


def _plan(line: str, root: Path) -> tuple[list[str], list[str]]:
    """(argv to run, option words its verb's --help must show)."""
    words = _substitute(shlex.split(line)[1:], root)
    if words and not words[0].startswith(("-", "+")) and "=" not in words[0]:  # a verb
        verb = words[:2] if words[0] == "store" else words[:1]
        return [*verb, "--help"], [w for w in words if w.startswith("-")]
    if words and words[0].startswith("--"):  # `skilleval --help`, `skilleval --version`
        return words, []
    return [*_first_cell(words), "--cfg", "job"], []


def test_every_readme_command_parses(newcomer) -> None:  # noqa: ANN001
    plans = [_plan(line, newcomer.cwd) for line in LINES]
    proc = subprocess.run([sys.executable, "-c", _DRIVER], input=json.dumps([a for a, _ in plans]),
                          cwd=newcomer.cwd, env=newcomer.env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    problems = []
    for line, (argv, options), r in zip(LINES, plans, json.loads(proc.stdout)):
        if r["code"] != 0:
            problems.append(f"{line}\n  -> skilleval {shlex.join(argv)} exited {r['code']}: "
                            f"{r['stderr'].strip()}")
        elif missing := [o for o in options if o not in r["stdout"]]:
            problems.append(f"{line}\n  -> options {missing} unknown to skilleval {shlex.join(argv)}")
    assert not problems, "\n".join(problems)


def test_help_lists_every_verb(newcomer) -> None:  # noqa: ANN001
    from skilleval.cli import _verbs

    text = newcomer.run("--help", check=0).stdout
    missing = [v for v in _verbs() if f"skilleval {v}" not in text and f"| {v}" not in text]
    assert not missing, missing
    assert "diff --sweep" in text


def test_sweep_with_cfg_is_one_line_not_a_traceback(newcomer) -> None:  # noqa: ANN001
    """Checking a sweep line the obvious way (`-m ... --cfg job`) is refused by Hydra; it used
    to end in a ValueError traceback."""
    r = newcomer.run("-m", "+experiment=trigger_eval", "trigger.threshold=0.3,0.5", "--cfg", "job")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--multirun" in r.stderr


def test_verb_help_has_no_docstring_markup(newcomer) -> None:  # noqa: ANN001
    for verb in (["serve-sim"], ["store", "check"], ["store", "compact"]):
        text = newcomer.run(*verb, "--help", check=0).stdout
        assert "``" not in text and f"skilleval {' '.join(verb)}:" in " ".join(text.split()), text


@pytest.mark.parametrize("word, needle", [("plugin", "did you mean plugins?"),
                                          ("trigger_eval", "skilleval +experiment=trigger_eval"),
                                          ("frobnicate", "commands: check-evals, diff")])
def test_a_bare_word_is_an_unknown_command_not_a_grammar_error(newcomer, word: str, needle: str) -> None:  # noqa: ANN001
    """`skilleval plugin` answered with Hydra's "Error parsing override 'plugin'; missing EQUAL"."""
    r = newcomer.run(word)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"unknown command '{word}'" in lines[0] and needle in lines[0], lines


def test_view_open_without_a_browser_says_so(newcomer) -> None:  # noqa: ANN001
    """README's `skilleval view --open` on a machine with no browser did nothing visible."""
    import select
    import signal

    env = {k: v for k, v in newcomer.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    env["PATH"] = str(newcomer.cwd / "no-browsers-here")
    proc = start_interruptible([sys.executable, "-m", "skilleval.cli", "view", "--open", "--port", "0"],
                               cwd=newcomer.cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        url = proc.stdout.readline().split()[2]  # "skilleval view: URL  (store ...)"
        ready, _, _ = select.select([proc.stderr], [], [], 30)  # nothing said: fail, not hang
        line = proc.stderr.readline() if ready else ""
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert "no web browser found" in line and url in line, line


def test_serve_sim_on_a_taken_port_names_it(newcomer) -> None:  # noqa: ANN001
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = newcomer.run("serve-sim", "--port", str(port), timeout=60)
    assert r.returncode == 2, r.stderr
    [line] = r.stderr.strip().splitlines()
    assert f"127.0.0.1:{port}" in line and "--port 0" in line and "Errno" not in line, line
