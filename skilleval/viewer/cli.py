"""The two verbs: ``skilleval view`` (live, loopback) and ``skilleval report`` (one file)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from skilleval.errors import UserError
from skilleval.cliargs import ArgParser as _Parser


def _store(path: str | None):  # noqa: ANN202 - Store
    from skilleval.store.catalog import Store, resolve_root

    root = resolve_root(path)
    if isinstance(root, str):  # an object-store URL: the viewer reads run folders on disk
        raise UserError(f"--store {root}: the viewer reads a local store only; "
                        "use `skilleval sql --store URL` for an object store")
    if path and not root.is_dir():
        raise UserError(f"--store {path}: no such folder")
    return Store(root)


def view_main(argv: list[str]) -> int:
    p = _Parser(prog="skilleval view", description="A live local web app over the store and the "
                "recorded run folders and workspaces (127.0.0.1 only). New trials, executions and "
                "optimisation iterations appear while a run goes; feedback typed on the Outputs "
                "page is saved to the workspace's feedback.json.")
    p.add_argument("--store", help="store root (default: $SKILLEVAL_STORE or the per-user store)")
    p.add_argument("--port", type=int, default=3117,
                   help="port on 127.0.0.1 (default 3117; a free one if taken; 0 = any free port)")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    args = p.parse_args(argv)
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port must be between 0 and 65535, got {args.port}")
    from skilleval.viewer.api import Api
    from skilleval.viewer.server import serve

    return serve(Api(_store(args.store), live=True), args.port, args.open)


def report_main(argv: list[str]) -> int:
    p = _Parser(prog="skilleval report", description="Write one self-contained HTML file for a run "
                "(or a sweep): no network at view time, scripts and styles inlined, a strict CSP.")
    p.add_argument("run", nargs="?", default="latest", help="run id, sweep id, or 'latest' (default)")
    p.add_argument("-o", "--output", required=True, help="the HTML file to write")
    p.add_argument("--store", help="store root (default: $SKILLEVAL_STORE or the per-user store)")
    args = p.parse_args(argv)
    from skilleval.viewer.report import write_report

    started = time.perf_counter()
    out = write_report(_store(args.store), args.run, Path(args.output))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB in {time.perf_counter() - started:.2f} s)",
          file=sys.stderr)
    return 0
