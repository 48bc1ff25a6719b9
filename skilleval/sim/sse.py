"""Rendering a simulated answer as a Messages API response: one JSON message, or the SSE
event sequence the real API streams (and the real CLI and SDK accept):

``message_start`` -> per block ``content_block_start``, ``content_block_delta``...,
``content_block_stop`` -> ``message_delta`` (stop_reason, final usage) -> ``message_stop``.
A ``ping`` follows the first block start, as on the real API. A mid-stream failure sends
``message_start`` then ``event: error`` with an ``overloaded_error`` body.
"""
from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from skilleval.sim.responder import Answer


def _msg_id() -> str:
    return "msg_sim" + uuid.uuid4().hex[:20]


def message_json(body: dict[str, Any], ans: "Answer", usage: dict[str, Any]) -> dict[str, Any]:
    return {"id": _msg_id(), "type": "message", "role": "assistant",
            "model": body.get("model"), "content": ans.content, "stop_reason": ans.stop_reason,
            "stop_sequence": None, "usage": usage}


def _chunks(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def stream_events(body: dict[str, Any], ans: "Answer | None", usage: dict[str, Any] | None,
                  *, fail: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
    start_usage = dict(usage or {"input_tokens": 0, "cache_creation_input_tokens": 0,
                                 "cache_read_input_tokens": 0, "output_tokens": 0})
    final_output = start_usage.get("output_tokens", 1)
    start_usage["output_tokens"] = 1
    yield "message_start", {"type": "message_start", "message": {
        "id": _msg_id(), "type": "message", "role": "assistant", "model": body.get("model"),
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}}
    if fail or ans is None:
        yield "error", {"type": "error", "error": {"type": "overloaded_error",
                                                    "message": "Overloaded (simulated mid-stream)"}}
        return
    for index, block in enumerate(ans.content):
        kind = block.get("type")
        if kind == "tool_use":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {**block, "input": {}}}
            if index == 0:
                yield "ping", {"type": "ping"}
            for piece in _chunks(json.dumps(block.get("input", {})), 12):
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "input_json_delta",
                                                        "partial_json": piece}}
        elif kind == "thinking":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "thinking", "thinking": "",
                                                            "signature": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "thinking_delta",
                                                    "thinking": block.get("thinking", "")}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "signature_delta",
                                                    "signature": block.get("signature", "sim")}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            if index == 0:
                yield "ping", {"type": "ping"}
            for piece in _chunks(str(block.get("text", "")), 24):
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "text_delta", "text": piece}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    final_usage = {**start_usage, "output_tokens": final_output}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": ans.stop_reason, "stop_sequence": None},
                            "usage": final_usage}
    yield "message_stop", {"type": "message_stop"}
