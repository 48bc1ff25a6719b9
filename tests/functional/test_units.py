"""Unit tests of the functional-eval pieces, on real files."""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from skilleval.backends.api_executor import run_tool
from skilleval.backends.stub import StubBackend, StubParams
from skilleval.errors import UserError
from skilleval.execution import ArmSettings, ExecutionRequest, prepare_sandbox, resolve_inside
from skilleval.functional.arms import assign_roles, check_equal
from skilleval.functional.benchmark import build_benchmark, render_md
from skilleval.functional.grader import LlmGrader, LlmGraderParams
from skilleval.functional.judges import CheckJudge, JudgeInput, JudgeOutput, Verdict, combine, json_path
from skilleval.functional.tasks import Expectation, TaskCase, load_evals
from skilleval.sim.agent.agent import agent_turn
from skilleval.sim.agent.stub_executor import simulate_execution
from skilleval.skills import load_skill

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"


def test_resolve_inside_rejects_escapes(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert resolve_inside(tmp_path, "a/b.txt") == (tmp_path / "a" / "b.txt").resolve()
    for bad in ("../x", "/etc/passwd", "a/../../x", ""):
        with pytest.raises(PermissionError):
            resolve_inside(tmp_path, bad)
    os.symlink("/etc", tmp_path / "link")
    with pytest.raises(PermissionError):
        resolve_inside(tmp_path, "link/passwd")


def test_load_evals_accepts_assertions_and_typed_checks() -> None:
    _, cases = load_evals(CSV_TIDY / "evals" / "evals.json")
    assert len(cases) >= 3
    merge = next(c for c in cases if c.name == "merge-lead-exports")
    assert merge.expectations, "the 'assertions' key is read"
    types = {e.type for c in cases for e in c.expectations}
    assert {"file_exists", "regex", "json_path", "contains", None} <= types


def test_load_evals_errors_name_file_and_entry(tmp_path: Path) -> None:
    p = tmp_path / "evals.json"
    p.write_text(json.dumps({"evals": [{"id": 1, "prompt": "x", "expectations": [{"path": "a"}]}]}))
    with pytest.raises(UserError, match=r"evals.json: eval #0 expectation #0"):
        load_evals(p)


def _item(tmp_path: Path, *specs: dict) -> JudgeInput:
    case = TaskCase("1", "t", "p")
    return JudgeInput(case, tuple(Expectation("x", s) for s in specs), tmp_path, "", ())


def test_deterministic_checks(tmp_path: Path) -> None:
    (tmp_path / "outputs").mkdir()
    (tmp_path / "outputs" / "r.json").write_text(json.dumps({"a": {"b": [1, 2]}, "n": 24}))
    (tmp_path / "outputs" / "o.csv").write_text("h1,h2\r\nx,\"y, z\"\n")
    item = _item(tmp_path, {"type": "json_path", "path": "outputs/r.json", "query": "$.a.b[1]", "equals": 2},
                 {"type": "json_path", "path": "outputs/r.json", "query": "$.n", "equals": 25},
                 {"type": "regex", "path": "outputs/o.csv", "pattern": r"^h1,h2\r?$"},
                 {"type": "contains", "path": "outputs/o.csv", "text": '"y, z"'},
                 {"type": "file_exists", "path": "outputs/missing.md"},
                 {"type": "file_exists", "path": "../../etc/passwd"})
    out = asyncio.run(CheckJudge("x").grade(item))
    assert [v.passed for v in out.verdicts] == [True, False, True, True, False, False]
    assert "expected 25" in out.verdicts[1].evidence
    assert json_path({"k": [{"v": 3}]}, "$.k[0].v") == 3


def test_combine_samples_marks_disagreement_and_errors() -> None:
    a = JudgeOutput([Verdict("e", True, "y"), Verdict("f", None, "", error="bad")])
    b = JudgeOutput([Verdict("e", False, "n"), Verdict("f", None, "", error="bad")])
    c = JudgeOutput([Verdict("e", True, "y"), Verdict("f", None, "", error="bad")])
    out = combine([a, b, c])
    assert out.verdicts[0].passed is True and out.verdicts[0].disagreement
    assert out.verdicts[0].agreement == pytest.approx(2 / 3, abs=1e-3)
    assert out.verdicts[1].passed is None and out.verdicts[1].status == "judge_error"
    tie = combine([a, b])
    assert tie.verdicts[0].passed is False  # burden of proof on the expectation


def test_roles_and_equal_arms() -> None:
    assert assign_roles(["old_skill", "with_skill"]) == {"old_skill": "baseline", "with_skill": "primary"}
    base = ArmSettings(model="m").to_dict()
    check_equal({"a": base, "b": {**base, "skills": [1]}})  # skills may differ
    with pytest.raises(UserError, match="arms differ in more than the skill.*tools"):
        check_equal({"with_skill": base, "without_skill": {**base, "tools": ["read_file"]}})


def _runs(cfg: str, rates: list[float]) -> list[dict]:
    return [{"eval_id": i // 2, "eval_name": f"e{i // 2}", "configuration": cfg, "run_number": i % 2 + 1,
             "result": {"pass_rate": r, "passed": 0, "failed": 0, "total": 1, "time_seconds": 10.0,
                        "tokens": 100}, "expectations": []} for i, r in enumerate(rates)]


def test_delta_sign_by_role_not_folder_order() -> None:
    runs = _runs("old_skill", [0.5] * 6) + _runs("with_skill", [1.0] * 6)
    b = build_benchmark(runs, {"skill_name": "s"}, "with_skill", "old_skill", n_boot=200)
    assert b["run_summary"]["delta"]["pass_rate"] == "+0.50"
    assert list(b["run_summary"])[:2] == ["with_skill", "old_skill"]
    assert b["delta_stats"]["pass_rate"]["low"] == pytest.approx(0.5)
    assert "With Skill" in render_md(b).splitlines()[8]


def _request(tmp_path: Path, key: str, with_skill: bool) -> ExecutionRequest:
    _, cases = load_evals(CSV_TIDY / "evals" / "evals.json")
    case = cases[0]
    sandbox = tmp_path / key
    files = prepare_sandbox(sandbox, CSV_TIDY, list(case.files))
    skills = (load_skill(CSV_TIDY),) if with_skill else ()
    return ExecutionRequest(key, case.id, case.name, "a", 0, case.prompt, sandbox,
                            ArmSettings(model="sim-1"), skills, files)


def test_stub_executor_writes_real_outputs_deterministically(tmp_path: Path) -> None:
    backend = StubBackend(StubParams())
    r1 = simulate_execution(_request(tmp_path, "k1", True), backend)
    r2 = simulate_execution(_request(tmp_path / "again", "k1", True), backend)
    assert r1.status == "ok" and {o.path for o in r1.outputs} >= {"outputs/contacts_clean.csv", "outputs/report.json"}
    assert [o.sha256 for o in r1.outputs] == [o.sha256 for o in r2.outputs]
    assert r1.skill_fired in (True, False)
    r3 = simulate_execution(_request(tmp_path, "k2", False), backend)
    assert r3.skill_fired is None and "Skill" not in r3.tool_calls


def _grade(text: str) -> tuple[JudgeOutput, StubBackend]:
    backend = StubBackend(StubParams())
    item = JudgeInput(TaskCase("1", "t", "task"), (Expectation(text),), Path("."), "transcript", (), backend)
    return asyncio.run(LlmGrader(LlmGraderParams(max_retries=1)).grade(item)), backend


def test_invalid_grader_json_is_reasked_then_a_judge_error() -> None:
    out, backend = _grade("[[sim:invalid-json]] the output is tidy")
    assert out.verdicts[0].passed is None and "invalid grader reply" in out.verdicts[0].error
    assert out.calls == 2 and backend.calls == 2
    ok, _ = _grade("[[sim:invalid-json-once]] the output is tidy")
    assert ok.calls == 2 and ok.verdicts[0].passed is not None


def test_sandbox_tools_refuse_escapes(tmp_path: Path) -> None:
    req = _request(tmp_path, "k3", False)
    text, err = run_tool(req, "write_file", {"path": "../evil.txt", "content": "x"})
    assert err and "refused" in text and not (tmp_path / "evil.txt").exists()
    text, err = run_tool(req, "read_file", {"path": "/etc/passwd"})
    assert err
    text, err = run_tool(req, "write_file", {"path": "outputs/a.txt", "content": "hi"})
    assert not err and (req.sandbox / "outputs" / "a.txt").read_text() == "hi"


def test_sim_agent_ignores_other_requests() -> None:
    assert agent_turn({"system": "hello", "messages": [{"role": "user", "content": "x"}]}) is None
