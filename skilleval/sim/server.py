"""``skilleval serve-sim``: a simulated Anthropic Messages API on 127.0.0.1.

The real ``anthropic`` SDK (2.x and 0.x) and the real ``claude`` CLI (``ANTHROPIC_BASE_URL``)
talk to it as they would to api.anthropic.com. It decides trigger requests with the same
simulated model as the ``stub`` backend (see ``skilleval.sim.responder``), answers other
requests with simulated completions, simulates prompt caching and Message Batches, and
injects faults (429/529 with ``retry-after``, mid-stream ``error`` events, latency).

Endpoints: ``POST /v1/messages`` (JSON or SSE), ``POST /v1/messages/count_tokens``,
``GET /v1/models[/{id}]``, ``/v1/messages/batches`` (create, list, retrieve, cancel,
results). Test controls: ``GET|POST /_sim/config``, ``GET /_sim/stats``, ``GET /_sim/log``
(decided trigger requests), ``POST /_sim/reset``. No API key is ever logged or kept.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

from skilleval.sim.batches import Batch, Batches, _error
from skilleval.sim.cache import PromptCache
from skilleval.sim.config import STREAM_CUT, Faults, SimConfig
from skilleval.sim.protocol import estimate_tokens
from skilleval.sim.responder import Answer, Decisions, answer
from skilleval.sim.sse import message_json, stream_events

MODELS = ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-sonnet-5",
          "claude-opus-4-8", "claude-haiku-4-5", "sim-1")
_ERROR_TYPES = {429: "rate_limit_error", 529: "overloaded_error", 500: "api_error",
                401: "authentication_error", 404: "not_found_error", 400: "invalid_request_error"}


class SimAPI:
    """The state of one simulated API process; the HTTP handler is a thin shell around it."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config or SimConfig()
        self.faults = Faults(self.config)
        self.decisions = Decisions()
        self.cache = PromptCache(self.config.cache_min_tokens)
        self.batches = Batches(self._batch_message, lambda: self.config.batch_delay_ms / 1000)
        self.stats: dict[str, int] = {}
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self.base_url = ""

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.stats[name] = self.stats.get(name, 0) + n

    @contextmanager
    def in_flight(self) -> Iterator[None]:
        """Count a Messages request while it is served; ``messages_in_flight_peak`` in the
        stats is the most at once (tests read how many callers the API saw together)."""
        with self._lock:
            self._in_flight += 1
            peak = self.stats.get("messages_in_flight_peak", 0)
            self.stats["messages_in_flight_peak"] = max(peak, self._in_flight)
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            stats = dict(self.stats)
        stats.update({f"fault_{k}": v for k, v in self.faults.counts_snapshot().items()})
        decisions = self.decisions
        with decisions.lock:
            stats["decided"] = sum(decisions.counts.values())
        return stats

    def reset(self) -> None:
        self.decisions = Decisions()
        self.cache.clear()
        with self._lock:
            self.stats.clear()
            self.bodies.clear()
        self.faults.counts_snapshot(clear=True)
        self.faults.reseed()

    def set_config(self, values: dict[str, Any]) -> None:
        self.config.update(values)
        self.cache.min_tokens = self.config.cache_min_tokens
        if "seed" in values:
            self.faults.reseed()

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[Answer, dict[str, Any]]:
        if self.config.record_bodies > 0:
            with self._lock:
                self.bodies.append(body)
                del self.bodies[:-self.config.record_bodies]
        ans = answer(body, headers, self.config, self.decisions, self.faults)
        self.count(f"answer_{ans.kind}")
        if ans.kind == "trigger":
            self.count("fired" if ans.fired else "not_fired")
        usage = self.cache.account(body).as_dict(estimate_tokens(ans.content) + 8)
        return ans, usage

    def _batch_message(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status = self.faults.draw_status(streaming=False)
        if status:
            return status, _error(_ERROR_TYPES[status], f"simulated {status}")["error"]
        ans, usage = self.respond(params, {})
        return 200, message_json(params, ans, usage)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "skilleval-serve-sim"
    api: SimAPI  # set on the subclass made by `make_server`
    verbose = False

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.verbose:
            sys.stderr.write(f"serve-sim: {self.command} {self.path.split('?')[0]}\n")

    # -- plumbing -----------------------------------------------------------------------

    def _body(self) -> dict[str, Any]:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            raw = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        data = json.loads(raw or b"{}")
        if not isinstance(data, dict):
            raise ValueError("body must be a JSON object")
        return data

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_sim" + uuid.uuid4().hex[:16])
        self.send_header("anthropic-ratelimit-requests-limit", "4000")
        self.send_header("anthropic-ratelimit-requests-remaining", "3999")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _fail(self, status: int, message: str = "") -> None:
        headers: dict[str, str] = {}
        retry_after = self.api.config.retry_after_s
        if status in (429, 529) and retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
            headers["retry-after-ms"] = str(int(retry_after * 1000))
        kind = _ERROR_TYPES.get(status, "api_error")
        self._send(status, _error(kind, message or f"simulated {kind}"), headers)

    def _authorised(self) -> bool:
        api_key = self.headers.get("x-api-key")
        bearer = self.headers.get("authorization", "")
        if api_key:
            self.api.count("auth_x_api_key")
        elif bearer.lower().startswith("bearer ") and bearer[7:].strip():
            self.api.count("auth_bearer")
        elif self.api.config.require_auth:
            return False
        self.api.count(f"version_{self.headers.get('anthropic-version', 'none')}")
        return True

    def _route(self, method: str) -> None:
        url = urlsplit(self.path)
        path = url.path.rstrip("/")
        self.api.count(f"{method} {path if not path.startswith('/v1/messages/batches/') else '/v1/messages/batches/{id}'}")
        try:
            if path.startswith("/_sim"):
                return self._control(method, path)
            if not self._authorised():
                return self._fail(401, "x-api-key or Authorization: Bearer header is required")
            if method == "POST" and path == "/v1/messages":
                with self.api.in_flight():
                    return self._messages(self._body())
            if method == "POST" and path == "/v1/messages/count_tokens":
                body = self._body()
                return self._send(200, {"input_tokens": self.api.cache.account(body, dry_run=True)
                                        .input_tokens})
            if method == "GET" and path == "/v1/models":
                return self._send(200, {"data": [_model(m) for m in MODELS], "has_more": False,
                                        "first_id": MODELS[0], "last_id": MODELS[-1]})
            if method == "GET" and path.startswith("/v1/models/"):
                return self._send(200, _model(path.rsplit("/", 1)[1]))
            if path.startswith("/v1/messages/batches"):
                return self._batches(method, path, parse_qs(url.query))
            return self._fail(404, f"no route {method} {path}")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except ValueError as exc:
            self._fail(400, f"invalid JSON body: {exc}")

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._route("DELETE")

    # -- endpoints ----------------------------------------------------------------------

    def _messages(self, body: dict[str, Any]) -> None:
        api = self.api
        if not body.get("model") or not isinstance(body.get("messages"), list):
            return self._fail(400, "model and messages are required")
        time.sleep(api.faults.latency_s())
        streaming = bool(body.get("stream"))
        status = api.faults.draw_status(streaming)
        if status and status not in (200, STREAM_CUT):
            return self._fail(status)
        headers = {k.lower(): v for k, v in self.headers.items()}
        if not streaming:
            ans, usage = api.respond(body, headers)
            return self._send(200, message_json(body, ans, usage))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.send_header("request-id", "req_sim" + uuid.uuid4().hex[:16])
        self.end_headers()
        self.close_connection = True
        if status == 200:  # mid-stream failure: the request is not decided
            events = stream_events(body, None, None, fail=True)
        elif status == STREAM_CUT:  # the connection drops after message_start
            events = iter([next(stream_events(body, None, None, fail=True))])
        else:
            ans, usage = api.respond(body, headers)
            events = stream_events(body, ans, usage)
        delay = api.config.chunk_delay_ms / 1000
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            if delay:
                time.sleep(delay)

    def _batches(self, method: str, path: str, query: dict[str, list[str]]) -> None:
        api = self.api
        parts = path.split("/")[4:]  # after /v1/messages/batches
        if method == "POST" and not parts:
            status, result = api.batches.create(self._body())
            return self._send(status, result.as_json(api.base_url) if isinstance(result, Batch)
                              else result)
        if method == "GET" and not parts:
            limit = int((query.get("limit") or ["20"])[0])
            items, more = api.batches.list(limit, (query.get("after_id") or [None])[0])
            data = [b.as_json(api.base_url) for b in items]
            return self._send(200, {"data": data, "has_more": more,
                                    "first_id": data[0]["id"] if data else None,
                                    "last_id": data[-1]["id"] if data else None})
        batch = api.batches.get(parts[0])
        if batch is None:
            return self._fail(404, f"no batch {parts[0]}")
        if len(parts) == 1 and method == "GET":
            return self._send(200, batch.as_json(api.base_url))
        if len(parts) == 2 and parts[1] == "results" and method == "GET":
            if batch.status != "ended":
                return self._fail(400, "batch has not ended")
            return self._send(200, Batches.results_jsonl(batch),
                              content_type="application/binary")
        if len(parts) == 2 and parts[1] == "cancel" and method == "POST":
            api.batches.cancel(batch.id)
            return self._send(200, batch.as_json(api.base_url))
        return self._fail(404, f"no route {method} {path}")

    def _control(self, method: str, path: str) -> None:
        api = self.api
        if path == "/_sim/config":
            if method == "POST":
                try:
                    api.set_config(self._body())
                except KeyError as exc:
                    return self._fail(400, str(exc))
            return self._send(200, api.config.as_dict())
        if path == "/_sim/stats":
            return self._send(200, api.snapshot())
        if path == "/_sim/log":
            with api.decisions.lock:
                return self._send(200, list(api.decisions.log))
        if path == "/_sim/requests":
            with api._lock:
                return self._send(200, list(api.bodies))
        if path == "/_sim/reset" and method == "POST":
            api.reset()
            return self._send(200, {"ok": True})
        return self._fail(404, f"no route {method} {path}")


def _model(model_id: str) -> dict[str, Any]:
    return {"type": "model", "id": model_id, "display_name": model_id,
            "created_at": "2026-10-07T00:00:00Z", "max_input_tokens": 1000000,
            "max_tokens": 128000}


class _Server(ThreadingHTTPServer):
    # The listen backlog is fixed at bind time; the stdlib default (5) drops SYNs under a
    # burst of 16+ clients, which then wait a full second for the TCP retransmit.
    request_queue_size = 1024
    daemon_threads = True


def make_server(api: SimAPI, host: str = "127.0.0.1", port: int = 0,
                verbose: bool = False) -> ThreadingHTTPServer:
    """Bind (loopback only) and return the server; ``api.base_url`` is set to its URL."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"serve-sim binds to the loopback interface only, not {host!r}")
    handler = type("SimHandler", (Handler,), {"api": api, "verbose": verbose})
    server = _Server((host, port), handler)
    api.base_url = f"http://{host}:{server.server_address[1]}"
    return server


def serve_sim_main(argv: list[str]) -> int:
    """Entry point of ``skilleval serve-sim``. Prints the base URL as the first stdout line."""
    from skilleval.cliargs import ArgParser
    from skilleval.errors import UserError
    from skilleval.sim.flags import add_config_flags

    parser = ArgParser(prog="skilleval serve-sim", description=__doc__.split("\n\n")[0].replace("``", ""))
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1", help="loopback only")
    parser.add_argument("--hook", action="append", default=[],
                        help="module to import (it registers message hooks), e.g. my.pkg.sim_hooks")
    parser.add_argument("--verbose", action="store_true", help="log each request line to stderr")
    add_config_flags(parser)
    try:
        args = parser.parse_args(argv)
    except UserError as exc:  # also when run as ``python -m skilleval.sim.server``
        print(exc, file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"serve-sim: --port must be 0-65535 (0 picks a free port), got {args.port}",
              file=sys.stderr)
        return 2
    config = SimConfig()
    config.update({f.name: getattr(args, f.name) for f in dataclasses.fields(SimConfig)
                   if getattr(args, f.name) is not None})
    import importlib

    for module in args.hook:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            print(f"serve-sim: --hook {module}: cannot import it ({exc})", file=sys.stderr)
            return 2
    api = SimAPI(config)
    try:
        server = make_server(api, args.host, args.port, args.verbose)
    except OSError as exc:  # "[Errno 98] Address already in use" named neither address nor way out
        print(f"skilleval: error: serve-sim: cannot listen on {args.host}:{args.port}: "
              f"{exc.strerror or exc} (--port 0 picks a free port)", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"serve-sim: {exc}", file=sys.stderr)
        return 2
    print(api.base_url, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":  # python -m skilleval.sim.server
    sys.exit(serve_sim_main(sys.argv[1:]))
