"""Trigger eval sets: skill-creator's JSON array and JSONL; errors name the file and the entry."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilleval.datasets import dump_trigger_cases, load_trigger_cases
from skilleval.errors import UserError
from spine_helpers import EXAMPLES


def test_json_array_and_jsonl_load_the_same(tmp_path: Path) -> None:
    rows = [{"query": "tidy my csv", "should_trigger": True},
            {"query": "write a poem", "should_trigger": False, "id": "poem", "split": "test"},
            {"query": "  padded query  ", "should_trigger": True}]
    arr = tmp_path / "set.json"
    arr.write_text(json.dumps(rows))
    jsonl = tmp_path / "set.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")  # blank lines are fine
    a, b = load_trigger_cases(arr), load_trigger_cases(jsonl)
    assert a == b
    assert [(c.query, c.should_trigger) for c in a] == [
        ("tidy my csv", True), ("write a poem", False), ("padded query", True)]
    assert a[1].id == "poem" and a[1].split == "test"
    assert a[0].id != a[2].id


def test_bundled_example_sets_load(tmp_path: Path) -> None:
    for name in ("changelog-writer", "csv-tidy"):
        cases = load_trigger_cases(EXAMPLES / name / "evals" / "trigger_eval.json")
        assert len(cases) == 20
        assert sum(c.should_trigger for c in cases) == 10


def test_dump_round_trips(tmp_path: Path) -> None:
    cases = load_trigger_cases(EXAMPLES / "csv-tidy" / "evals" / "trigger_eval.json")
    out = tmp_path / "copy.json"
    dump_trigger_cases(cases, out)
    assert load_trigger_cases(out) == cases
    assert all({"query", "should_trigger"} <= set(r) for r in json.loads(out.read_text()))


@pytest.mark.parametrize("suffix, content, fragments", [
    (".json", '[{"query": "a", "should_trigger": true}, {"query": "b", "should_trigger": false},'
              ' {"query": "a", "should_trigger": false}]',
     ["entry 2", "duplicate query", "entry 0"]),
    (".jsonl", '{"query": "a", "should_trigger": true}\n{"query": "a", "should_trigger": true}\n',
     ["line 2", "duplicate query", "line 1"]),
    (".json", "[]", ["empty"]),
    (".jsonl", "\n\n", ["empty"]),
    (".json", '[{"query": "a", "should_trigger": true}, {"query": "b"}]',
     ["entry 1", "missing key 'should_trigger'"]),
    (".json", '[{"should_trigger": true}]', ["entry 0", "missing key 'query'"]),
    (".json", '[{"query": "a", "should_trigger": true}, {"query": "b", "should_trigger": "yes"}]',
     ["entry 1", "'should_trigger' must be true or false", '"yes"']),
    (".jsonl", '{"query": 42, "should_trigger": true}\n', ["line 1", "'query' must be a string"]),
    (".json", '[{"query": "a", "should_trigger": true},]', ["invalid JSON", "line 1"]),
    (".jsonl", '{"query": "a", "should_trigger": true}\n{"query": "b", \n', ["line 2", "invalid JSON"]),
    (".json", '{"query": "a"}', ["expected a JSON array"]),
    (".json", '["just a string"]', ["entry 0", "expected an object"]),
    (".json", '[{"query": "  ", "should_trigger": true}]', ["entry 0", "'query' is empty"]),
])
def test_errors_name_the_file_and_the_entry(tmp_path: Path, suffix: str, content: str,
                                            fragments: list[str]) -> None:
    path = tmp_path / f"my_set{suffix}"
    path.write_text(content)
    with pytest.raises(UserError) as info:
        load_trigger_cases(path)
    msg = str(info.value)
    assert str(path) in msg
    for frag in fragments:
        assert frag in msg, msg
    assert "\n" not in msg


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="eval set not found"):
        load_trigger_cases(tmp_path / "nope.json")
