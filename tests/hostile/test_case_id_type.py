"""An eval-set entry's optional `id` is a string or a whole number; anything else (an object,
a list, true) is bad input naming the entry. It used to become the id "{'x': 1}" silently."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from shared_helpers import one_line_error


@pytest.mark.parametrize("bad", [{"x": 1}, [1], True, 1.5])
def test_odd_case_id_is_one_line_exit_2(skilleval_cli, tmp_path: Path, bad) -> None:  # noqa: ANN001
    cases = tmp_path / "c.json"
    cases.write_text(json.dumps([{"query": "a changelog please", "should_trigger": True, "id": bad},
                                 {"query": "plan a trip", "should_trigger": False}]))
    line = one_line_error(skilleval_cli.run("+experiment=trigger_eval", f"cases={cases}"), 2)
    assert "entry 0" in line and "'id'" in line, line


def test_string_and_number_ids_are_kept(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    cases = tmp_path / "c.json"
    cases.write_text(json.dumps([{"query": "a changelog please", "should_trigger": True, "id": 7},
                                 {"query": "plan a trip", "should_trigger": False, "id": "trip"}]))
    skilleval_cli.run("+experiment=trigger_eval", f"cases={cases}", "trigger.runs=1", check=0)
    ids = [r["id"] for r in json.loads(skilleval_cli.results()[-1].read_text())["results"]]
    assert ids == ["7", "trip"]
