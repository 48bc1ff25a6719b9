"""The JSON body of a POST to one of skilleval's loopback pages (`view`, `review-evals`).

Both servers are `http.server` handlers, and `http.server` leaves the body to the handler.
Why a shared reader: each handler read ``int(Content-Length)`` bytes itself, so a header of
``abc`` was a traceback with no answer, ``-1`` read until the client closed (past the size
cap) and a body that was not UTF-8 a traceback in `review-evals`. Every such request is now a
400 with one line, and only a body within the cap is read.
"""
from __future__ import annotations

import json
from email.message import Message
from typing import Any, BinaryIO


class BodyError(Exception):
    """A request body refused: `status` is the HTTP code to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def read_json_body(headers: Message, rfile: BinaryIO, max_bytes: int) -> Any:
    """The decoded JSON body (None when empty), or BodyError."""
    raw = (headers.get("Content-Length") or "0").strip()
    if not raw.isdigit():  # also refuses "-1": a negative length would read to the end
        raise BodyError(400, f"Content-Length must be a whole number of bytes, got {raw[:40]!r}")
    size = int(raw)
    if size > max_bytes:
        raise BodyError(413, f"body too large ({size:,} bytes; at most {max_bytes:,})")
    data = rfile.read(size)
    try:
        return json.loads(data.decode("utf-8")) if data.strip() else None
    except UnicodeDecodeError:
        raise BodyError(400, "the body is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise BodyError(400, f"invalid JSON ({exc.msg} at character {exc.pos})") from None


def origin_ok(headers: Message, port: int) -> bool:
    """A write's ``Origin``, when the browser sends one, must be this page's own: scheme, host
    and port (comparing the host name alone let another local server's page write here)."""
    origin = headers.get("Origin")
    return origin is None or origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}")
