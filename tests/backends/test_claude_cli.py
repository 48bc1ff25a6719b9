"""The claude_cli backend with the REAL `claude` CLI (pinned, from npm) against serve-sim.

Only the malformed-output case uses a fake executable: the real CLI cannot produce it.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import uuid

import pytest

from backend_cases import CSV, PDF, SECRET, stub_results, trials, verdicts
from skilleval.backends.claude_cli import ClaudeCliBackend, ClaudeCliParams
from skilleval.domain import Outcome, Skill, Trial, TrialResult
from skilleval.errors import HarnessError
from skilleval.trigger.selfcheck import self_check

pytestmark = pytest.mark.timeout(180)


def backend(sim, claude_bin, **kw) -> ClaudeCliBackend:
    kw.setdefault("model", "sim-1")
    kw.setdefault("timeout_s", 60.0)
    kw.setdefault("retry_base_s", 0.05)
    return ClaudeCliBackend(ClaudeCliParams(executable=claude_bin, base_url=sim.url, **kw))


def run_all(b, items, concurrency: int = 6) -> list[TrialResult]:
    async def go() -> list[TrialResult]:
        gate = asyncio.Semaphore(concurrency)

        async def one(t: Trial) -> TrialResult:
            async with gate:
                return await b.run_trial(t)
        return list(await asyncio.gather(*(one(t) for t in items)))
    return asyncio.run(go())


def _processes_with(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


def test_verdicts_match_stub_trigger_nontrigger_and_competitor(sim, claude_bin):
    items = trials(repeats=2)
    got = run_all(backend(sim, claude_bin), items)
    assert verdicts(got) == verdicts(stub_results(items))
    assert {r.outcome for r in got} == {Outcome.TRIGGERED, Outcome.NOT_TRIGGERED}
    assert any(r.fired == CSV.name for r in got)
    assert all(r.backend_version == "claude-cli/" + got[0].backend_version.split("/")[1] for r in got)
    assert all(PDF.name in r.shown and CSV.name in r.shown for r in got)
    # Isolation: every decided request listed exactly the trial's two skills.
    assert all(sorted(e["listing"]) == sorted([CSV.name, PDF.name]) for e in sim.log())


def test_skill_fires_after_an_orientation_tool_call(sim, claude_bin):
    sim.configure(orient_rate=1.0)
    items = trials(repeats=1)[:4]
    got = run_all(backend(sim, claude_bin, max_turns=3), items)
    assert verdicts(got) == verdicts(stub_results(items))
    fired = [r for r in got if r.fired]
    assert fired and all(r.position == 1 for r in fired)


def test_529_storm_is_retried_and_counted_then_errors(sim, claude_bin):
    sim.configure(overloaded_rate=1.0)
    got = run_all(backend(sim, claude_bin, max_retries=1, cli_max_retries=1), trials(repeats=1)[:1])[0]
    assert got.outcome is Outcome.ERROR and "529" in got.error
    assert got.retries >= 3  # CLI-internal api_retry lines + our whole-run retry
    sim.configure(overloaded_rate=0.0, fail_next=[529, 529])
    items = trials(repeats=1)[:1]
    got = run_all(backend(sim, claude_bin, max_retries=2, cli_max_retries=0), items)
    assert got[0].outcome.valid and got[0].retries >= 2
    assert verdicts(got) == verdicts(stub_results(items))


def test_mid_stream_errors_recover_with_the_right_verdict(sim, claude_bin):
    # The real CLI answers a mid-stream `error` event by re-asking without streaming; the
    # verdict must still be the simulator's, never a silent "not triggered".
    sim.configure(stream_error_rate=1.0)
    items = trials(repeats=1)[:3]
    got = run_all(backend(sim, claude_bin, max_retries=0, cli_max_retries=0), items)
    assert verdicts(got) == verdicts(stub_results(items))
    assert sim.stats()["fault_stream_error"] >= len(items)


def test_hanging_cli_is_killed_at_the_timeout_without_orphans(sim, claude_bin):
    sim.configure(latency_ms=60000)
    marker = f"hang-{uuid.uuid4().hex[:8]}"
    item = trials(repeats=1, queries=[f"fill the pdf form {marker}"])[0]
    got = run_all(backend(sim, claude_bin, timeout_s=3.0), [item])[0]
    assert got.outcome is Outcome.TIMEOUT and got.latency_ms < 15000
    assert _processes_with(marker) == []


def test_bad_flag_exit_code_is_an_error(sim, claude_bin):
    got = run_all(backend(sim, claude_bin, extra_args=["--no-such-flag"]), trials(repeats=1)[:1])[0]
    assert got.outcome is Outcome.ERROR and got.error.startswith("exit 1")


def test_malformed_output_is_an_error(sim, tmp_path):
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo '2.1.332 (Claude Code)'; exit 0; }\n"
                    "echo 'not json'\necho '{\"type\":\"system\",\"subtype\":\"init\"'\nexit 0\n")
    fake.chmod(0o755)
    got = run_all(backend(sim, str(fake)), trials(repeats=1)[:1])[0]
    assert got.outcome is Outcome.ERROR and "malformed" in got.error


def test_self_check_passes_and_fails_when_skill_not_shown(sim, claude_bin):
    skill = Skill(PDF.name, PDF.description, "# body\n", path=None, frontmatter={})  # type: ignore[arg-type]
    other = Skill(CSV.name, CSV.description, "# csv\n", path=None, frontmatter={})  # type: ignore[arg-type]
    asyncio.run(self_check(backend(sim, claude_bin), skill, [other]))
    hidden = backend(sim, claude_bin, extra_args=["--disallowedTools", "Skill"])
    with pytest.raises(HarnessError) as info:
        asyncio.run(self_check(hidden, skill, [other]))
    assert info.value.exit_code == 3 and "positive control" in str(info.value)


def test_api_key_never_appears_in_results_or_requests(sim, claude_bin, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    sim.configure(fail_next=[529])
    b = backend(sim, claude_bin, max_retries=1, cli_max_retries=0)
    got = run_all(b, trials(repeats=1)[:2])
    assert all(r.outcome.valid for r in got)
    blob = repr(got) + json.dumps(b.identity()) + json.dumps(sim.log()) + json.dumps(sim.stats())
    blob += sim.http.get("/_sim/requests").text
    assert SECRET not in blob


def test_text_completion(sim, claude_bin):
    c = asyncio.run(backend(sim, claude_bin).complete("Say hello in one word"))
    assert "simulated completion" in c.text and c.input_tokens > 0


def test_non_retryable_api_error_is_not_rerun(sim, claude_bin):
    # A 401 (or other non-retryable 4xx) fails the same way every time: no whole-run retries.
    sim.configure(fail_next=[401] * 4)
    got = run_all(backend(sim, claude_bin, max_retries=3, cli_max_retries=0), trials(repeats=1)[:1])[0]
    assert got.outcome is Outcome.ERROR and "401" in got.error and got.retries == 0
    assert sim.stats().get("POST /v1/messages", 0) == 1


def _fake_cli(tmp_path, body: str) -> str:
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo '2.1.332 (Claude Code)'; exit 0; }\n"
                    + body)
    fake.chmod(0o755)
    return str(fake)


def test_cli_that_closes_stdout_and_hangs_is_killed_at_the_timeout(sim, tmp_path):
    # stdout closed early must not turn the timeout off: the wait for the exit is bounded too.
    marker = f"closed-{uuid.uuid4().hex[:8]}"
    fake = _fake_cli(tmp_path, "echo '{\"type\":\"system\",\"subtype\":\"init\"}'\n"
                               f"exec 1>&-\nsleep 30 # {marker}\n")
    work = tmp_path / "work"
    work.mkdir()
    got = run_all(backend(sim, fake, timeout_s=1.5, work_root=str(work)), trials(repeats=1)[:1])[0]
    assert got.outcome is Outcome.TIMEOUT and got.latency_ms < 10000
    assert list(work.iterdir()) == []


def test_failed_spawn_leaves_no_trial_folder(sim, tmp_path):
    fake = _fake_cli(tmp_path, "exit 0\n")
    work = tmp_path / "work"
    work.mkdir()
    b = backend(sim, fake, work_root=str(work))
    (tmp_path / "claude").unlink()  # the executable vanished after start-up
    with pytest.raises(OSError):
        asyncio.run(b.run_trial(trials(repeats=1)[0]))
    assert list(work.iterdir()) == []
