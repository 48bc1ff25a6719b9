"""Issue 4 acceptance through the whole app (real subprocesses, serve-sim, the real CLI):
same per-query verdicts as the stub, 529 storms counted, self-check exit 3, no key leaks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skilleval.sim.process import SimProcess  # the `sim` fixture (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
FAKE_KEY = "sk-ant-api03-FAKEKEYFORTESTS-0123456789abcdef"


def small_cases(tmp: Path) -> Path:
    """Six queries of csv-tidy's eval set: both classes, competitor-prone near-misses."""
    rows = json.loads((ROOT / "experiments/csv-tidy/evals/trigger_eval.json").read_text())
    picked = rows[:3] + rows[14:17]
    path = tmp / "cases.json"
    path.write_text(json.dumps(picked))
    return path


def run_app(tmp: Path, store: str, *overrides: str, extra_env: dict | None = None
            ) -> tuple[subprocess.CompletedProcess, dict | None]:
    out = tmp / f"out-{store}-{len(list(tmp.glob('out-*')))}"
    env = {**os.environ, "SKILLEVAL_STORE": str(tmp / store), "SKILLEVAL_OUTPUTS": str(out),
           "ANTHROPIC_API_KEY": FAKE_KEY, **(extra_env or {})}
    cmd = [sys.executable, "-m", "skilleval.cli", "+experiment=trigger_eval",
           "skill=" + str(ROOT / "experiments/csv-tidy"), f"cases={small_cases(tmp)}",
           "distractors=[" + ",".join(str(p) for p in sorted((ROOT / "experiments/distractors").iterdir())) + "]",
           "backend.model=sim-1", "trigger.runs=2", "progress=false", *overrides]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=tmp)
    found = list(out.rglob("results.json"))
    return proc, (json.loads(found[0].read_text()) if found else None)


def verdicts(result: dict) -> list[tuple[str, int, int, str]]:
    return [(r["query"], r["triggers"], r["valid_runs"], r["verdict"]) for r in result["results"]]


@pytest.fixture(scope="module")
def stub_result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    proc, result = run_app(tmp_path_factory.mktemp("stub"), "store", "backend=stub")
    assert proc.returncode == 0, proc.stderr
    return result


@pytest.mark.parametrize("concurrency", [1, 16])
def test_claude_cli_matches_stub(tmp_path: Path, sim: SimProcess, claude_bin: str,
                                 stub_result: dict, concurrency: int) -> None:
    sim.reset()
    proc, result = run_app(tmp_path, "store", "backend=claude_cli", f"backend.executable={claude_bin}",
                           f"backend.base_url={sim.url}", f"trigger.concurrency={concurrency}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert verdicts(result) == verdicts(stub_result)
    assert result["metrics"]["errors"] == 0


def test_anthropic_api_matches_stub_and_survives_529s(tmp_path: Path, sim: SimProcess,
                                                       stub_result: dict) -> None:
    sim.reset()
    proc, result = run_app(tmp_path, "clean", "backend=anthropic_api", f"backend.base_url={sim.url}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert verdicts(result) == verdicts(stub_result)

    sim.reset()
    # 30 % 529s, and the first two requests certainly: the self-check is off so that every
    # fault lands on a stored trial (its retries are then in the `trials` view).
    sim.configure(overloaded_rate=0.3, retry_after_s=0.01, fail_next=[529, 529])
    proc, stormy = run_app(tmp_path, "storm", "backend=anthropic_api", f"backend.base_url={sim.url}",
                           "backend.retry_base_s=0.01", "backend.retry_max_s=0.05",
                           "trigger.self_check=false")
    sim.configure(overloaded_rate=0.0)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sim.stats().get("fault_529", 0) > 0
    # Every trial either measured (same verdicts as the stub) or is counted as an error;
    # none is silently "not triggered".
    for mine, ref in zip(stormy["results"], stub_result["results"]):
        if mine["errors"] == 0:
            assert (mine["triggers"], mine["verdict"]) == (ref["triggers"], ref["verdict"])
    store = tmp_path / "storm"
    rows = subprocess.run([sys.executable, "-m", "skilleval.cli", "sql", "--store", str(store),
                           "--format", "json", "select sum(retries) r, count(*) n from trials"],
                          capture_output=True, text=True, check=True)
    assert json.loads(rows.stdout)[0]["r"] > 0


def test_self_check_fails_with_exit_3_when_skill_hidden(tmp_path: Path, sim: SimProcess,
                                                        claude_bin: str) -> None:
    sim.reset()
    proc, _ = run_app(tmp_path, "store", "backend=claude_cli", f"backend.executable={claude_bin}",
                      f"backend.base_url={sim.url}", "backend.extra_args=[--disallowedTools,Skill]")
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert "self-check" in proc.stderr.lower()


def test_no_api_key_in_store_logs_or_results(tmp_path: Path, sim: SimProcess, claude_bin: str) -> None:
    sim.reset()
    for backend in (["backend=anthropic_api"], ["backend=claude_cli", f"backend.executable={claude_bin}"]):
        proc, _ = run_app(tmp_path, "store", *backend, f"backend.base_url={sim.url}")
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert FAKE_KEY not in proc.stdout + proc.stderr
    leaks = [p for p in tmp_path.rglob("*") if p.is_file() and FAKE_KEY.encode() in p.read_bytes()]
    assert leaks == []
    assert FAKE_KEY not in json.dumps(sim.log())
