"""``skilleval serve-sim --help`` explains every flag, and a bad value is one line and exit 2."""
from __future__ import annotations

import dataclasses
import re

import pytest

from skilleval.sim.config import SimConfig

UNIT = re.compile(r"milliseconds|seconds|0-1|tokens|a count|true or false|score units|unit of score|"
                  r"HTTP statuses|seed|skill name|tool_use")


def test_help_gives_every_config_flag_a_line_with_its_unit(skilleval_cli):
    proc = skilleval_cli.run("serve-sim", "--help", check=0)
    # argparse wraps each entry: "  --flag METAVAR   help..." then indented continuation lines.
    entries = re.split(r"\n  (?=--)", proc.stdout)
    by_flag = {e.split()[0]: " ".join(e.split()[1:]) for e in entries if e.startswith("--")}
    for f in dataclasses.fields(SimConfig):
        flag = "--" + f.name.replace("_", "-")
        assert flag in by_flag, f"{flag} missing from --help"
        words = by_flag[flag].split(None, 1)
        assert len(words) == 2 and len(words[1]) > 20, f"{flag} has no help line: {by_flag[flag]!r}"
        assert UNIT.search(by_flag[flag]), f"{flag}'s help names no unit: {by_flag[flag]!r}"


@pytest.mark.parametrize(("args", "says"), [
    (["--overloaded-rate", "1.5"], "--overloaded-rate"),
    (["--latency-ms", "-5"], "--latency-ms"),
    (["--require-auth", "maybe"], "--require-auth"),
    (["--fail-next", "529,abc"], "--fail-next"),
    (["--hostile-tool-calls", "{not json"], "--hostile-tool-calls"),
    (["--record-bodies", "-1"], "--record-bodies"),
    (["--hook", "no_such_module_for_serve_sim"], "--hook"),
])
def test_a_bad_flag_value_exits_2_with_one_line(skilleval_cli, args, says):
    proc = skilleval_cli.run("serve-sim", "--port", "0", *args, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
