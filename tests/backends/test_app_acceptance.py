"""Issue 4 acceptance through the whole app (real subprocesses, serve-sim, the real CLI):
same per-query verdicts as the stub, 529 storms counted, self-check exit 3, no key leaks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import forked_cli
from once_per_run import once_per_run
from shared_helpers import reset_sim
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
    args = ["+experiment=trigger_eval",
            "skill=" + str(ROOT / "experiments/csv-tidy"), f"cases={small_cases(tmp)}",
            "distractors=[" + ",".join(str(p) for p in sorted((ROOT / "experiments/distractors").iterdir())) + "]",
            "backend.model=sim-1", "trigger.runs=2", "progress=false", *overrides]
    proc = forked_cli.run(args, cwd=tmp, env=env, timeout=300)
    found = list(out.rglob("results.json"))
    return proc, (json.loads(found[0].read_text()) if found else None)


def verdicts(result: dict) -> list[tuple[str, int, int, str]]:
    return [(r["query"], r["triggers"], r["valid_runs"], r["verdict"]) for r in result["results"]]


@pytest.fixture(scope="module")
def stub_result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    proc, result = once_per_run(tmp_path_factory, "app-acceptance-stub",
                                lambda root: run_app(root, "store", "backend=stub"))
    assert proc.returncode == 0, proc.stderr
    return result


@dataclass
class RealRuns:
    """The fault-free real-backend runs, made once per test run (`once_per_run`: not once
    per xdist worker): the match-the-stub tests and the no-key-leak test read the same runs
    (their folder, output and serve-sim's log)."""

    root: Path
    runs: dict[str, tuple[subprocess.CompletedProcess, dict | None]]
    sim_logs: list[str]


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest,
              claude_bin: str) -> RealRuns:
    def build(root: Path) -> tuple[Path, dict, list[str]]:
        sim_server: SimProcess = request.getfixturevalue("sim_server")  # only when building
        backends = {
            "anthropic_api": ["backend=anthropic_api"],
            "claude_cli-1": ["backend=claude_cli", f"backend.executable={claude_bin}",
                             "trigger.concurrency=1"],
            "claude_cli-16": ["backend=claude_cli", f"backend.executable={claude_bin}",
                              "trigger.concurrency=16"],
        }
        runs, logs = {}, []
        for name, overrides in backends.items():
            reset_sim(sim_server)
            runs[name] = run_app(root, name, *overrides, f"backend.base_url={sim_server.url}")
            logs.append(json.dumps(sim_server.log()))
        return root, runs, logs
    return RealRuns(*once_per_run(tmp_path_factory, "app-acceptance-real-runs", build))


@pytest.mark.parametrize("concurrency", [1, 16])
def test_claude_cli_matches_stub(real_runs: RealRuns, stub_result: dict, concurrency: int) -> None:
    proc, result = real_runs.runs[f"claude_cli-{concurrency}"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert verdicts(result) == verdicts(stub_result)
    assert result["metrics"]["errors"] == 0


def test_anthropic_api_matches_stub_and_survives_529s(tmp_path: Path, sim: SimProcess,
                                                       stub_result: dict, real_runs: RealRuns) -> None:
    proc, result = real_runs.runs["anthropic_api"]
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


def test_no_api_key_in_store_logs_or_results(real_runs: RealRuns) -> None:
    """Over the module's anthropic_api and claude_cli runs: their output, every file they
    wrote (stores, outputs, the CLI's project folders) and what serve-sim received."""
    for proc, _ in real_runs.runs.values():
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert FAKE_KEY not in proc.stdout + proc.stderr
    files = [p for p in real_runs.root.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)  # the scan sees the stores
    leaks = [p for p in files if FAKE_KEY.encode() in p.read_bytes()]
    assert leaks == []
    assert all(FAKE_KEY not in log for log in real_runs.sim_logs)
