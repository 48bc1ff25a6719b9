"""`skilleval view`: the live viewer, a small threaded HTTP server on 127.0.0.1.

Why the standard library and not an ASGI stack: the server answers a few JSON routes for one
person on one machine; ``http.server`` keeps the install small and has no event loop to share.

Safety: binds 127.0.0.1 only; checks the Host header (DNS rebinding) and, on POST, the Origin;
serves static assets from a fixed list and recorded files only through `Api.file` (containment
checks); sends a strict CSP, ``nosniff`` and no-store on every answer; recorded files go out as
attachments with a sandbox CSP, so a hostile HTML or SVG output cannot run in our origin.
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
import urllib.parse
from http.server import ThreadingHTTPServer
from typing import Any

from skilleval.local_http import BodyError, HardenedHandler, origin_ok, read_json_body
from skilleval.viewer import feedback
from skilleval.viewer.api import Api, BadRequest, NotFound
from skilleval.viewer.files import Refused, guess_mime
from skilleval.viewer.functional_data import discover_runs
from skilleval.viewer.render import LIVE_CSP, SCRIPTS, STATIC, live_page, to_json

HOST = "127.0.0.1"
MAX_BODY = 1_000_000
_ASSETS = {*SCRIPTS, "app.css"}


class Handler(HardenedHandler):
    server: "ViewerServer"
    protocol_version = "HTTP/1.1"
    csp = LIVE_CSP + "; frame-ancestors 'none'"

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet: the terminal is the user's
        return

    # -- plumbing ---------------------------------------------------------------------

    def _send(self, code: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_file(self, path: Any) -> None:
        """A recorded file, streamed: a model's output can be larger than the viewer's memory."""
        name = urllib.parse.quote(path.name, errors="surrogateescape")
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            self.send_response(200)
            for k, v in (("Content-Type", guess_mime(path)), ("Content-Length", str(size)),
                         ("Content-Security-Policy", "sandbox; default-src 'none'"),
                         ("Content-Disposition", f"attachment; filename*=UTF-8''{name}")):
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                shutil.copyfileobj(fh, self.wfile, 1 << 20)

    def _json(self, code: int, data: Any) -> None:
        self._send(code, to_json(data).encode("utf-8"),
                   "application/json; charset=utf-8")

    def _host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
        return host in ("127.0.0.1", "localhost")

    # -- GET --------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        if not self._host_ok():
            return self._json(403, {"error": "bad Host header"})
        url = urllib.parse.urlsplit(self.path)
        # surrogateescape: a file name's bytes that are not UTF-8 come back as they were sent
        params = dict(urllib.parse.parse_qsl(url.query, errors="surrogateescape"))
        try:
            if url.path in ("/", "/index.html"):
                return self._send(200, live_page().encode("utf-8"), "text/html; charset=utf-8")
            if url.path.startswith("/static/"):
                name = url.path[len("/static/"):]
                if name not in _ASSETS:
                    return self._json(404, {"error": "no such asset"})
                ctype = "text/css" if name.endswith(".css") else "text/javascript"
                return self._send(200, (STATIC / name).read_bytes(), ctype + "; charset=utf-8")
            if url.path == "/api/file":
                path = self.server.api.file(params.get("run", ""), params.get("path", ""))
                return self._send_file(path)
            if url.path.startswith("/api/"):
                return self._json(200, self.server.api.get(url.path, params))
            return self._json(404, {"error": "not found"})
        except Refused as exc:
            return self._json(403, {"error": str(exc)})
        except NotFound as exc:
            return self._json(404, {"error": f"not found: {exc}"})
        except BadRequest as exc:
            return self._json(400, {"error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - one bad request must not stop the viewer
            return self._json(500, {"error": f"{type(exc).__name__}: {exc}"})

    do_HEAD = do_GET

    # -- POST: feedback ---------------------------------------------------------------

    def do_POST(self) -> None:  # noqa: N802
        if not self._host_ok():
            return self._json(403, {"error": "bad Host header"})
        if not origin_ok(self.headers, self.server.server_address[1]):
            return self._json(403, {"error": "cross-origin request refused"})
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            return self._json(415, {"error": "send application/json"})
        try:
            body = read_json_body(self.headers, self.rfile, MAX_BODY)
            body = {} if body is None else body
            if not isinstance(body, dict):
                raise ValueError("expected an object")
            ws = self.server.api.workspace(str(body.get("run", "")))
            if ws is None:
                return self._json(404, {"error": "run has no workspace"})
            ids = {feedback.review_id(ws, r["run_dir"]) for r in discover_runs(ws)}
            if self.path == "/api/feedback":
                rid, text, base = body.get("review_id"), body.get("feedback"), body.get("base")
                if rid not in ids or not isinstance(text, str) or not isinstance(base, (str, type(None))):
                    return self._json(400, {"error": "unknown review_id, or feedback (or base) not a string"})
                try:
                    feedback.save(ws, rid, text, base)
                except feedback.Conflict as exc:  # another tab saved since: its text, not lost
                    return self._json(409, {"error": str(exc), "conflict": True, "current": exc.current})
                return self._json(200, {"ok": True})
            if self.path == "/api/feedback/submit":
                feedback.submit(ws, sorted(ids))
                return self._json(200, {"ok": True})
            return self._json(404, {"error": "not found"})
        except BodyError as exc:
            return self._json(exc.status, {"error": str(exc)})
        except feedback.Unreadable as exc:  # a person's file: refused, never overwritten
            return self._json(409, {"error": str(exc)})
        except (ValueError, OSError) as exc:
            return self._json(400, {"error": f"{type(exc).__name__}: {exc}"})


class ViewerServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, api: Api, port: int) -> None:
        self.api = api
        super().__init__((HOST, port), Handler)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"


def bind(api: Api, port: int) -> ViewerServer:
    """Bind 127.0.0.1:port; if it is taken, an ephemeral port (we never stop other programs)."""
    try:
        return ViewerServer(api, port)
    except OSError as exc:
        if port == 0:
            raise
        print(f"skilleval view: port {port} is in use ({exc.strerror}); using a free port instead",
              file=sys.stderr)
        return ViewerServer(api, 0)


def serve(api: Api, port: int, open_browser: bool = False) -> int:
    srv = bind(api, port)
    # Read the runs index in the background now, so the first page does not pay for it.
    threading.Thread(target=api.q.index.table, daemon=True).start()
    print(f"skilleval view: {srv.url}  (store {api.store.root}; Ctrl-C to stop)", flush=True)
    if open_browser:
        from skilleval.browser import open_page

        open_page(srv.url)
    try:
        srv.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
    return 0


__all__ = ["ViewerServer", "bind", "serve"]
