"""Path -> JSON: the one API both the live server and the static report use.

GET paths (query string after ``?``):

* ``/api/runs?q=&experiment=&status=&sweep=&offset=&limit=`` - a page of runs;
* ``/api/run/<id>`` - one run and the pages it has;
* ``/api/run/<id>/trigger``, ``/trials?since=ISO``, ``/opt``, ``/functional``, ``/comparison``,
  ``/routing``.

The static report calls the same functions and embeds their answers, keyed by path.
"""
from __future__ import annotations

import threading
import time
import urllib.parse
from datetime import datetime
from pathlib import Path
from typing import Any

from skilleval.store.catalog import Store
from skilleval.viewer import functional_data, opt_data, trigger_data
from skilleval.viewer.files import Refused, contained
from skilleval.viewer.routing_data import routing_page
from skilleval.viewer.queries import RUN_ID, Queries


class NotFound(LookupError):
    pass


class BadRequest(ValueError):
    """A request the API cannot read (a malformed parameter): 400, not a 500 with SQL in it."""


class Api:
    def __init__(self, store: Store, *, live: bool = True) -> None:
        self.store = store
        self.q = Queries(store, keep_connection=not live)
        self.live = live
        self._ws: dict[str, Path] = {}
        self._ws_at = 0.0
        self._lock = threading.Lock()

    # -- where files may come from ------------------------------------------------------

    def workspaces(self) -> dict[str, Path]:
        with self._lock:
            if time.monotonic() - self._ws_at > 2.0:
                self._ws = self.q.workspaces()
                self._ws_at = time.monotonic()
            return dict(self._ws)

    def workspace(self, run_id: str) -> Path | None:
        return self.workspaces().get(run_id)

    def roots(self) -> list[Path]:
        """Every folder the server may read: the store and each recorded workspace."""
        return [self.store.root, *(functional_data.workspace_root(p) for p in self.workspaces().values())]

    def file(self, run_id: str, rel: str) -> Path:
        """A recorded file of a run's workspace, refused if it leaves the allowed folders."""
        ws = self.workspace(run_id)
        if ws is None:
            raise NotFound(f"run {run_id!r} recorded no workspace")
        root = functional_data.workspace_root(ws)
        path = contained([root], rel, root)
        if not path.is_file() or not functional_data.is_output_file(path, ws):
            raise NotFound(rel)
        return path

    # -- GET ------------------------------------------------------------------------------

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        params = params or {}
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        if parts[:2] == ["api", "runs"] and len(parts) == 2:
            return self.q.runs(q=params.get("q", ""), experiment=params.get("experiment", ""),
                               status=params.get("status", ""), sweep=params.get("sweep", ""),
                               offset=_int(params.get("offset"), 0, "offset"), limit=_int(params.get("limit"), 50, "limit"))
        if parts[:2] == ["api", "run"] and len(parts) in (3, 4):
            run_id = parts[2]
            if not RUN_ID.match(run_id):
                raise NotFound(run_id)
            if len(parts) == 3:
                return self.run(run_id)
            return self.page(run_id, parts[3], params)
        raise NotFound(path)

    def run(self, run_id: str) -> dict[str, Any]:
        run = self.q.run(run_id)
        if run is None:
            raise NotFound(run_id)
        tables = set(run["tables"])
        pages = []
        # routing and attribute runs list several skills or several descriptions per query: the
        # trigger page's single-skill precision/recall would mix them and read as one skill's.
        many = run["experiment"] in ("routing", "attribute")
        if not many and (tables & {"trials", "queries"} and run["experiment"] != "trigger_opt" or
                         run["experiment"] == "trigger_eval"):
            pages.append("trigger")
        if "candidates" in tables or run["experiment"] == "trigger_opt":
            pages.append("opt")
        if "executions" in tables or self.workspace(run_id) or run["experiment"] == "functional_eval":
            pages += ["outputs", "benchmark"]
        if "comparisons" in tables:  # a blind comparison run: its verdicts come first
            pages.insert(0, "comparison")
        if isinstance((run.get("summary") or {}).get("routing"), dict):  # a routing run: its matrix
            pages.insert(0, "routing")
        if isinstance((run.get("summary") or {}).get("attribution"), dict):  # sentence -> effect
            pages.insert(0, "attribute")  # its data is the run row's: no page of its own to fetch
        run["pages"] = pages
        run["workspace"] = str(self.workspace(run_id) or "") or None
        return run

    def page(self, run_id: str, name: str, params: dict[str, str]) -> Any:
        if self.q.run(run_id) is None:  # a page of no run is not an empty live page
            raise NotFound(run_id)
        if name == "trigger":
            return trigger_data.trigger_page(self.q, run_id)
        if name == "trials":
            since = params.get("since") or None
            if since is not None:
                try:
                    datetime.fromisoformat(since)
                except ValueError:
                    raise BadRequest(f"since={since[:40]!r} is not an ISO timestamp") from None
            return trigger_data.trials(self.q, run_id, since=since)
        if name == "opt":
            return opt_data.opt_page(self.q, run_id)
        if name == "functional":
            url = functional_data.file_url(run_id, functional_data.workspace_root(ws)) \
                if self.live and (ws := self.workspace(run_id)) else None
            return functional_data.functional_page(self.q, run_id, self.workspace(run_id), url=url)
        if name == "routing":
            return routing_page(self.q, run_id)
        if name == "comparison":
            return {"comparisons": functional_data.comparisons(self.q, run_id)}
        raise NotFound(name)


def _int(v: str | None, default: int, name: str = "") -> int:
    """A whole-number parameter; a malformed one is a 400 (it was silently the default)."""
    if v is None or v == "":
        return default
    try:
        n = int(v)
    except ValueError:
        raise BadRequest(f"{name or 'parameter'} must be a whole number, got {v[:40]!r}") from None
    if n < 0:
        raise BadRequest(f"{name or 'parameter'} must be at least 0, got {n}")
    return n


__all__ = ["Api", "BadRequest", "NotFound", "Refused"]
