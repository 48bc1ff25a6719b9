"""What skilleval's two loopback pages (`view`, `review-evals`) share: the headers every answer
carries, and the reading of a POST's JSON body.

Both servers are `http.server` handlers. `HardenedHandler` puts the page's CSP and the
security headers on every answer, including the error pages `http.server` writes itself
(``send_error``: 501 for an unknown method, 414 for a request line past its limit), which
the handlers' own ``_send`` never saw. (Errors found before the request's HTTP version is
read are written HTTP/0.9 style, with no headers at all.) `http.server` leaves the body to the handler.
Why a shared reader: each handler read ``int(Content-Length)`` bytes itself, so a header of
``abc`` was a traceback with no answer, ``-1`` read until the client closed (past the size
cap) and a body that was not UTF-8 a traceback in `review-evals`. Every such request is now a
400 with one line, and only a body within the cap is read.
"""
from __future__ import annotations

import json
from email.message import Message
from http.server import BaseHTTPRequestHandler
from typing import Any, BinaryIO

#: sent on every answer unless the answer names its own value (a recorded file's sandbox CSP)
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
                    "X-Frame-Options": "DENY", "Cache-Control": "no-store"}


class HardenedHandler(BaseHTTPRequestHandler):
    """A handler whose every answer carries ``csp`` and `SECURITY_HEADERS`: a header the
    answer sends itself wins, the rest are added at ``end_headers``."""

    csp = "default-src 'none'; frame-ancestors 'none'"

    def send_response(self, code: int, message: str | None = None) -> None:
        self._named: set[str] = set()
        super().send_response(code, message)

    def send_header(self, keyword: str, value: str) -> None:
        getattr(self, "_named", set()).add(keyword.lower())
        super().send_header(keyword, value)

    def end_headers(self) -> None:
        named = getattr(self, "_named", set())
        for keyword, value in {"Content-Security-Policy": self.csp, **SECURITY_HEADERS}.items():
            if keyword.lower() not in named:
                super().send_header(keyword, value)
        super().end_headers()


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
    except RecursionError:  # '[' * 10000: the decoder's stack, not a server error
        raise BodyError(400, "invalid JSON (nested too deeply)") from None


def origin_ok(headers: Message, port: int) -> bool:
    """A write's ``Origin``, when the browser sends one, must be this page's own: scheme, host
    and port (comparing the host name alone let another local server's page write here)."""
    origin = headers.get("Origin")
    return origin is None or origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}")
