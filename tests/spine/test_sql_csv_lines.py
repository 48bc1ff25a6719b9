"""`skilleval sql --format csv` ends lines with "\\n", as shell tools expect: with the csv
module's default "\\r\\n", `$(skilleval sql ... --format csv | tail -1)` carried a "\\r" into
the next command (`skilleval diff --sweep ID` then found no sweep 'ID\\r')."""
from __future__ import annotations

import subprocess
import sys


def test_csv_has_unix_line_ends(skilleval_cli) -> None:  # noqa: ANN001
    out = subprocess.run([sys.executable, "-m", "skilleval.cli", "sql", "select 'a,b' as x, 2 as y",
                          "--format", "csv"], cwd=skilleval_cli.cwd, env=skilleval_cli.env,
                         capture_output=True, check=True).stdout
    assert out == b'x,y\n"a,b",2\n', out
