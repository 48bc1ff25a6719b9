"""serve-sim driven by the real anthropic SDK (2.x Bearer auth) and by raw 0.x-style requests."""
from __future__ import annotations

import httpx
import pytest

import anthropic
from skilleval.sim.protocol import parse_listing, parse_request

pytestmark = pytest.mark.timeout(60)
SKILL_TOOL = {"name": "Skill", "description": "Invoke a skill.",
              "input_schema": {"type": "object", "properties": {"skill": {"type": "string"}}}}
LISTING = ("<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n"
           "- pdf-form-filler: Fill in PDF forms. Use when the user asks to fill a PDF form.\n"
           "- csv-summarizer: Summarize CSV files with pandas.\n\nToday's date is 2026-11-30.\n"
           "</system-reminder>")


def client(sim) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-ant-test", base_url=sim.url, max_retries=0)


def body(query: str) -> dict:
    return {"model": "sim-1", "max_tokens": 100, "tools": [SKILL_TOOL],
            "messages": [{"role": "user", "content": [{"type": "text", "text": LISTING},
                                                      {"type": "text", "text": query}]}]}


def test_listing_parsing_stops_at_the_end_of_the_list():
    listing = parse_listing(LISTING)
    assert [s.name for s in listing] == ["pdf-form-filler", "csv-summarizer"]
    assert listing[1].description == "Summarize CSV files with pandas."
    conv = parse_request(body("fill my pdf form"))
    assert conv.query == "fill my pdf form" and conv.has_skill_tool


def test_create_stream_count_models_with_sdk2(sim):
    c = client(sim)
    m = c.messages.create(**body("Please fill in the PDF form tax.pdf"))
    assert m.content[0].type == "tool_use" and m.content[0].input == {"skill": "pdf-form-filler"}
    with c.messages.stream(**body("Please fill in the PDF form tax.pdf")) as s:
        names = [ev.type for ev in s]
    assert names[0] == "message_start" and "content_block_stop" in names and names[-1] == "message_stop"
    assert c.messages.count_tokens(model="sim-1", messages=[{"role": "user", "content": "hi"}]).input_tokens > 0
    assert "sim-1" in [m.id for m in c.models.list()]
    stats = sim.stats()
    assert stats["auth_bearer"] >= 4 and stats["version_2026-10-21"] >= 4


def test_sdk0_style_x_api_key_and_missing_auth(sim):
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    r = httpx.post(f"{sim.url}/v1/messages?beta=true", json=body("hello"), headers=headers)
    assert r.status_code == 200 and r.json()["type"] == "message"
    assert httpx.post(f"{sim.url}/v1/messages", json=body("hello")).status_code == 401
    assert sim.stats()["version_2023-06-01"] == 1


def test_429_and_529_carry_retry_after_and_midstream_error_surfaces(sim):
    sim.configure(fail_next=[529, 429, 200], retry_after_s=2)
    c = client(sim)
    with pytest.raises(anthropic.InternalServerError) as e529:
        c.messages.create(**body("x"))
    assert e529.value.status_code == 529 and e529.value.response.headers["retry-after"] == "2"
    with pytest.raises(anthropic.RateLimitError):
        c.messages.create(**body("x"))
    with pytest.raises(anthropic.APIStatusError) as mid:
        with c.messages.stream(**body("x")) as s:
            list(s)
    assert mid.value.status_code == 200
    assert sim.stats()["decided"] == 0, "faulted requests are not decided"


def test_prompt_cache_and_runtime_config(sim):
    sim.configure(cache_min_tokens=16)
    req = body("fill my pdf form")
    req["system"] = [{"type": "text", "text": "You are helpful. " * 20, "cache_control": {"type": "ephemeral"}}]
    first = client(sim).messages.create(**req).usage
    second = client(sim).messages.create(**req).usage
    assert first.cache_creation_input_tokens > 0 and first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert httpx.post(f"{sim.url}/_sim/config", json={"nope": 1}).status_code == 400


def test_batches_create_retrieve_list_results(sim):
    c = client(sim)
    batch = c.messages.batches.create(requests=[
        {"custom_id": "a", "params": body("fill the pdf form")},
        {"custom_id": "b", "params": body("what is 2+2")}])
    assert batch.processing_status == "in_progress"
    import time

    while c.messages.batches.retrieve(batch.id).processing_status != "ended":
        time.sleep(0.05)
    results = {r.custom_id: r.result.type for r in c.messages.batches.results(batch.id)}
    assert results == {"a": "succeeded", "b": "succeeded"}
    assert batch.id in [b.id for b in c.messages.batches.list()]


def test_non_loopback_host_is_refused():
    from skilleval.sim.server import serve_sim_main

    assert serve_sim_main(["--host", "0.0.0.0", "--port", "0"]) == 2


def test_verbose_server_does_not_block_on_a_full_stderr_pipe():
    # ~200 KB of request log lines: more than a pipe holds when nobody reads it.
    from skilleval.sim.process import SimProcess

    with SimProcess(verbose=True) as sim:
        client = httpx.Client(base_url=sim.url, timeout=5)
        long_id = "m" * 4000
        for _ in range(50):
            assert client.get(f"/v1/models/{long_id}").status_code == 401
        assert client.get("/_sim/stats").status_code == 200
        client.close()
        assert sim.stderr_text().count("serve-sim: GET /v1/models/") == 50
