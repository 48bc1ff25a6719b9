"""``skilleval review-evals``: a small loopback page to review and edit a trigger eval set.

Self-contained (stdlib ``http.server`` + Jinja2) so ``skilleval view`` can mount the same
handlers later. Why stdlib rather than an ASGI framework: four routes, one user, one
process; a framework would add a dependency and a server to run for nothing.

Safety: it binds 127.0.0.1 only; the ``Host`` header must name that address (a DNS-rebinding
page cannot reach it); writes need a JSON body and the per-process token embedded in the page
(a cross-site form cannot post). The page is rendered with Jinja2 autoescaping, its data is a
``tojson`` block, the script builds the DOM with ``textContent`` only, and the CSP allows no
inline script. Save validates the set (`evalset.validate_rows`), copies the old file to a
backup folder outside the skill folder, then writes atomically.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from skilleval.atomic import write_text_atomic
from skilleval.browser import open_page
from skilleval.domain import Skill
from skilleval.errors import SkillevalError, UserError
from skilleval.evalsets.coverage import coverage, query_clauses
from skilleval.evalsets.evalset import (assign_ids, backup, contained, default_backup_dir, read_rows, resolve_set_path,
                                        validate_rows, write_rows)
from skilleval.local_http import BodyError, HardenedHandler, origin_ok, read_json_body
from skilleval.terminal import visible_line

# img-src allows data: for the page's empty `<link rel="icon" href="data:,">` (without it,
# chromium asks for /favicon.ico and logs the 404 as a console error); the page shows no images.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
MAX_BODY = 5 * 1024 * 1024
_STATIC = {"/review.js": "application/javascript; charset=utf-8", "/review.css": "text/css; charset=utf-8"}


class SaveConflict(UserError):
    """The file changed since the page loaded it (HTTP 409)."""


@dataclass
class ReviewState:
    set_path: Path
    save_path: Path
    skill: Skill | None
    backup_dir: Path
    token: str
    lock: threading.Lock
    #: every id this session has shown or saved: a row added after another was deleted must
    #: not take the deleted row's id (results keyed by case id would pair the two queries)
    issued: set[str] = field(default_factory=set)

    def payload(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        cov = coverage(self.skill, rows) if self.skill else []
        return {"rows": rows, "query_clauses": query_clauses(cov), "version": self.version(),
                "uncovered": [c.to_dict() for c in cov if not c.queries]}

    def version(self) -> str:
        """What the file a save would replace holds now (a digest; "absent" before it
        exists). A page sends back the version it loaded, and a save over a file that has
        changed since is refused: two tabs, or a page open while the set was redrafted on
        disk, each saved over the other's work with "Saved" shown to both."""
        try:
            return hashlib.sha256(self.save_path.read_bytes()).hexdigest()[:16]
        except FileNotFoundError:
            return "absent"

    def load(self) -> list[dict[str, Any]]:
        rows = read_rows(self.set_path) if self.set_path.is_file() else []
        assign_ids(rows, self.issued)  # ids so coverage can point at rows
        self.issued.update(str(r["id"]) for r in rows)
        return rows

    def save(self, rows: Any, base: str | None = None) -> dict[str, Any]:
        """Write `rows`; `base`: the version the page loaded (None: no check, for scripts)."""
        # the page sends every row, blank ones too, so a message's "row #N" is the row it shows
        clean = validate_rows(rows, where="edited set", skip_blank=True, reserved=self.issued)
        self.issued.update(str(r["id"]) for r in clean)
        if not clean:
            raise UserError("edited set: no queries left; an eval set needs at least one")
        with self.lock:
            if base is not None and base != self.version():
                raise SaveConflict(f"not saved: {self.save_path} changed since this page loaded it "
                                   "(another tab saved, or the file was rewritten); reload the page "
                                   "to see it, then make your edits again")
            name = self.skill.name if self.skill else self.save_path.stem
            saved = backup(self.save_path, name, self.backup_dir)
            if self.save_path.suffix == ".jsonl":  # atomically too: a crash never leaves half a set
                write_text_atomic(self.save_path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in clean))
            else:
                write_rows(self.save_path, clean)
            self.set_path = self.save_path
        return {**self.payload(clean), "backup": str(saved) if saved else None, "path": str(self.save_path)}


def _env() -> Environment:
    return Environment(loader=PackageLoader("skilleval.evalsets", "templates"),
                       autoescape=select_autoescape(["html"]))


def make_handler(state: ReviewState, port_ref: list[int]) -> type[BaseHTTPRequestHandler]:
    env = _env()

    class Handler(HardenedHandler):
        server_version = "skilleval-review"
        csp = CSP

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet; errors go to the page
            return

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, code: int, obj: Any) -> None:
            self._send(code, json.dumps(obj, ensure_ascii=False).encode(), "application/json; charset=utf-8")

        def _host_ok(self) -> bool:
            host = self.headers.get("Host", "")
            return host in (f"127.0.0.1:{port_ref[0]}", f"localhost:{port_ref[0]}")

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if not self._host_ok():
                return self._json(403, {"error": "bad Host header"})
            path = self.path.split("?", 1)[0]
            if path in _STATIC:
                text = (resources.files("skilleval.evalsets") / "templates" / path.lstrip("/")).read_bytes()
                return self._send(200, text, _STATIC[path])
            if path == "/api/set":
                try:  # the set may be edited on disk while the page is open
                    return self._json(200, state.payload(state.load()))
                except SkillevalError as exc:
                    return self._json(500, {"error": str(exc)})
            if path != "/":
                return self._json(404, {"error": "not found"})
            try:
                rows = state.load()
            except SkillevalError as exc:
                return self._json(500, {"error": str(exc)})
            skill = state.skill
            data = {**state.payload(rows), "token": state.token}
            html = env.get_template("review.html").render(
                skill_name=skill.name if skill else state.set_path.stem,
                description=skill.description if skill else "", set_path=str(state.set_path),
                save_path=str(state.save_path), data=data)
            self._send(200, html.encode(), "text/html; charset=utf-8")

        def do_POST(self) -> None:  # noqa: N802
            if not self._host_ok():
                return self._json(403, {"error": "bad Host header"})
            if self.path != "/api/save":
                return self._json(404, {"error": "not found"})
            if not secrets.compare_digest(self.headers.get("X-Review-Token", ""), state.token):
                return self._json(403, {"error": "missing or wrong review token"})
            if not origin_ok(self.headers, port_ref[0]):
                return self._json(403, {"error": "cross-origin request refused"})
            if not self.headers.get("Content-Type", "").startswith("application/json"):
                return self._json(415, {"error": "expected application/json"})
            try:
                body = read_json_body(self.headers, self.rfile, MAX_BODY)
                rows = body.get("rows") if isinstance(body, dict) else None
                base = body.get("base") if isinstance(body, dict) else None
                return self._json(200, state.save(rows, base if isinstance(base, str) else None))
            except BodyError as exc:
                return self._json(exc.status, {"error": str(exc)})
            except SaveConflict as exc:
                return self._json(409, {"error": str(exc)})
            except UserError as exc:
                return self._json(400, {"error": str(exc)})
            except OSError as exc:  # the disk said no (full, read-only): said, not a dropped page
                return self._json(500, {"error": f"could not write {state.save_path}: {exc.strerror or exc}"})

    return Handler


def build_state(path: str | Path, *, skill: str | None = None, save_to: str | None = None,
                backup_dir: Path | None = None) -> ReviewState:
    from skilleval.skills import load_skill

    set_path, skill_dir = resolve_set_path(path)
    sk = load_skill(skill) if skill else (load_skill(skill_dir) if skill_dir else None)
    read_rows(set_path)  # bad input fails now (exit 2), not on the first page load
    bdir = (backup_dir or default_backup_dir()).resolve()
    if sk is not None and (bdir == sk.path.resolve() or sk.path.resolve() in bdir.parents):
        raise UserError(f"backup folder {bdir} is inside the skill folder {sk.path}; choose another")
    if sk is not None and sk.path.resolve() in set_path.absolute().parents:
        contained(set_path, sk.path)  # a symlinked set in a hostile skill must not redirect writes
    save_path = Path(save_to).expanduser() if save_to else set_path
    if save_path.is_dir():  # found at the first Save, it dropped the page's connection
        raise UserError(f"--save-to {save_path}: a folder; give the file to write the set to")
    if not save_path.parent.is_dir():
        raise UserError(f"--save-to {save_path}: its folder {save_path.parent} does not exist")
    return ReviewState(set_path.resolve(), save_path.resolve(), sk, bdir, secrets.token_urlsafe(24),
                       threading.Lock())


def serve_review(path: str | Path, *, skill: str | None = None, port: int = 0, save_to: str | None = None,
                 backup_dir: Path | None = None, open_browser: bool = True) -> int:
    state = build_state(path, skill=skill, save_to=save_to, backup_dir=backup_dir)
    port_ref = [port]
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(state, port_ref))
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    port_ref[0] = server.server_address[1]
    url = f"http://127.0.0.1:{port_ref[0]}/"
    print(f"reviewing {visible_line(state.set_path)} at {url} (Ctrl-C to stop)", flush=True)
    if open_browser:
        open_page(url)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
