"""The anthropic_api backend through the real anthropic SDK against serve-sim (a subprocess)."""
from __future__ import annotations

import asyncio
import json

import pytest

from backend_cases import CSV, PDF, SECRET, stub_results, trials, verdicts
from skilleval.backends.anthropic_api import AnthropicApiBackend, AnthropicApiParams
from skilleval.domain import Outcome, Skill, TrialResult
from skilleval.errors import HarnessError
from skilleval.trigger.selfcheck import self_check

pytestmark = pytest.mark.timeout(120)


def backend(sim, **kw) -> AnthropicApiBackend:
    kw.setdefault("model", "sim-1")
    kw.setdefault("retry_base_s", 0.01)
    kw.setdefault("retry_max_s", 0.05)
    return AnthropicApiBackend(AnthropicApiParams(base_url=sim.url, **kw))


def run_all(b: AnthropicApiBackend, items) -> list[TrialResult]:
    async def go() -> list[TrialResult]:
        try:
            return list(await asyncio.gather(*(b.run_trial(t) for t in items)))
        finally:
            await b.aclose()
    return asyncio.run(go())


@pytest.mark.parametrize("layout", ["reminder", "system_message", "tool_lines", "tool_xml"])
def test_verdicts_match_stub_in_every_listing_layout(sim, layout):
    items = trials()
    got = run_all(backend(sim, layout=layout), items)
    assert verdicts(got) == verdicts(stub_results(items))
    outcomes = {r.outcome for r in got}
    assert Outcome.TRIGGERED in outcomes and Outcome.NOT_TRIGGERED in outcomes
    assert any(r.fired == CSV.name for r in got), "a competing skill fires for csv queries"
    assert all(r.backend_version.startswith(f"anthropic_api/{layout}") for r in got)
    assert all(r.shown == (CSV.name, PDF.name) for r in got)
    assert sim.stats()["auth_bearer"] >= len(items)


def test_prompt_cache_reads_and_writes_are_accounted(sim):
    sim.configure(cache_min_tokens=64)
    b = backend(sim)
    first = run_all(b, trials(repeats=1)[:1])[0]
    rest = run_all(backend(sim), trials(repeats=1, prefix="u")[1:3])
    assert first.cache_write_tokens > 0 and first.cache_read_tokens == 0
    assert all(r.cache_read_tokens > 0 for r in rest)
    assert all(r.input_tokens >= r.cache_read_tokens + r.cache_write_tokens for r in rest)
    assert first.cost_usd > 0 and rest[0].cost_usd < first.cost_usd


def test_529_storm_completes_counts_retries_and_never_scores_errors_as_misses(sim):
    sim.configure(overloaded_rate=0.3, rate_limit_rate=0.05, stream_error_rate=0.1)
    items = trials(repeats=3)
    b = backend(sim, max_retries=8)
    got = run_all(b, items)
    expected = stub_results(items)
    assert sum(r.retries for r in got) > 0
    for r, e in zip(got, expected):
        if r.outcome.valid:
            assert (r.outcome, r.fired) == (e.outcome, e.fired)
        else:
            assert r.outcome is Outcome.ERROR and r.error
    stats = sim.stats()
    assert stats.get("fault_529", 0) > 0
    assert b.limiter.cuts >= 1


def test_permanent_overload_is_an_error_after_max_retries(sim):
    sim.configure(overloaded_rate=1.0)
    got = run_all(backend(sim, max_retries=2), trials(repeats=1)[:2])
    assert [r.outcome for r in got] == [Outcome.ERROR, Outcome.ERROR]
    assert all(r.retries == 2 and "529" in r.error for r in got)


def test_mid_stream_error_is_retried(sim):
    sim.configure(fail_next=[200, 200])
    got = run_all(backend(sim), trials(repeats=1)[:1])[0]
    assert got.outcome.valid and got.retries == 2
    assert sim.stats()["fault_stream_error"] == 2


def test_non_retryable_error_is_an_error_outcome(sim):
    b = backend(sim, model="")  # the sim answers 400 to a request without a model
    got = run_all(b, trials(repeats=1)[:1])[0]
    assert got.outcome is Outcome.ERROR and got.retries == 0 and "400" in got.error


def test_skill_fires_after_an_orientation_tool_call(sim):
    sim.configure(orient_rate=1.0)
    items = trials(repeats=1)
    got = run_all(backend(sim, extra_tools=["Read"], max_turns=3), items)
    assert verdicts(got) == verdicts(stub_results(items))
    fired = [r for r in got if r.fired]
    assert fired and all(r.position == 1 for r in fired)
    assert sim.stats()["answer_orient"] == len(items)


def test_complete_and_cost(sim):
    b = backend(sim)

    async def go():
        try:
            return await b.complete("Say hello", system="be brief")
        finally:
            await b.aclose()

    c = asyncio.run(go())
    assert "simulated completion" in c.text and c.input_tokens > 0 and c.cost_usd > 0


def test_self_check_passes_and_fails_when_everything_errors(sim):
    skill = Skill(PDF.name, PDF.description, "# body\n", path=None, frontmatter={})  # type: ignore[arg-type]
    other = Skill(CSV.name, CSV.description, "# csv\n", path=None, frontmatter={})  # type: ignore[arg-type]
    b = backend(sim)
    asyncio.run(self_check(b, skill, [other]))
    sim.configure(overloaded_rate=1.0)
    b = backend(sim, max_retries=0)
    with pytest.raises(HarnessError) as info:
        asyncio.run(self_check(b, skill, [other]))
    assert info.value.exit_code == 3 and "every control trial failed" in str(info.value)


def test_api_key_never_appears_in_results_or_sim_records(sim, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    sim.configure(fail_next=[529, 400])
    b = backend(sim)
    got = run_all(b, trials(repeats=1)[:3])
    blob = repr(got) + json.dumps(b.identity()) + json.dumps(sim.stats()) + json.dumps(sim.log())
    blob += sim.http.get("/_sim/requests").text
    assert SECRET not in blob and SECRET[:20] not in blob


def test_batch_mode_matches_stub_and_resumes_from_saved_batch_id(sim, tmp_path):
    items = trials(repeats=2)
    b = backend(sim, batch=True, batch_window_s=0.05, batch_poll_s=0.05, max_retries=4)
    b.set_state_dir(tmp_path)
    sim.configure(overloaded_rate=0.2)
    got = run_all(b, items)
    assert verdicts(got) == verdicts(stub_results(items))
    assert sim.stats().get("POST /v1/messages/batches", 0) >= 1
    assert got[0].cost_usd > 0
    # A crash after create: the saved batch id is picked up by a new backend, not re-created.
    sim.configure(overloaded_rate=0.0, batch_delay_ms=300.0)
    before = sim.stats().get("POST /v1/messages/batches", 0)
    from skilleval.backends.api_batch import BatchRunner

    first = backend(sim, batch=True, batch_window_s=0.05, batch_poll_s=0.05)
    first.set_state_dir(tmp_path)
    more = trials(repeats=1, prefix="resume")
    batch_id = asyncio.run(BatchRunner(first).submit_only(more))
    assert list((tmp_path / "batches").glob("*.json"))
    second = backend(sim, batch=True, batch_window_s=0.05, batch_poll_s=0.05)
    second.set_state_dir(tmp_path)
    resumed = run_all(second, more)
    assert sim.stats()["POST /v1/messages/batches"] == before + 1
    assert verdicts(resumed) == verdicts(stub_results(more))
    assert batch_id.startswith("msgbatch_")
    assert not list((tmp_path / "batches").glob("*.json"))


def test_timeout_after_retries_keeps_the_retry_count(sim):
    # Two 529s (answered at once), then a stream too slow for timeout_s: TIMEOUT, 2 retries.
    sim.configure(fail_next=[529, 529], chunk_delay_ms=250.0)
    try:
        got = run_all(backend(sim, timeout_s=0.6), trials(repeats=1)[:1])[0]
        assert got.outcome is Outcome.TIMEOUT and got.retries == 2
    finally:
        sim.configure(chunk_delay_ms=0.0)


def test_cut_stream_is_retried_and_never_scored_as_not_triggered(sim):
    sim.configure(stream_cut_rate=1.0)
    try:
        got = run_all(backend(sim, max_retries=1), trials(repeats=1)[:3])
        assert all(r.outcome is Outcome.ERROR and r.retries == 1 for r in got), got
        assert sim.stats()["fault_stream_cut"] == 6
        sim.configure(stream_cut_rate=0.5)
        items = trials(repeats=1)
        got = run_all(backend(sim, max_retries=20), items)
        assert verdicts(got) == verdicts(stub_results(items))
    finally:
        sim.configure(stream_cut_rate=0.0)


def test_batch_resume_of_a_batch_the_api_no_longer_has_resubmits(sim, tmp_path):
    from skilleval.backends.api_batch import custom_id

    items = trials(repeats=1)[:3]
    saved = tmp_path / "batches" / "msgbatch_gone.json"
    saved.parent.mkdir()
    saved.write_text(json.dumps({"batch_id": "msgbatch_gone", "model": "sim-1",
                                 "custom_ids": [custom_id(t) for t in items]}))
    b = backend(sim, batch=True, batch_window_s=0.05, batch_poll_s=0.05)
    b.set_state_dir(tmp_path)
    got = run_all(b, items)
    assert verdicts(got) == verdicts(stub_results(items))
    assert not saved.exists()
