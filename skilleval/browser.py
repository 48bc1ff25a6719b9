"""`--open` for the local pages (`view`, `review-evals`): open the URL, or say it could not.

On a machine without a browser (a server, a container) `webbrowser.open` returns False and
did nothing visible; the user then waited for a window that never came.
"""
from __future__ import annotations

import sys
import threading
import webbrowser


def open_page(url: str) -> None:
    """Open `url` in the background (a console browser may take over and block otherwise)."""

    def run() -> None:
        try:
            opened = webbrowser.open(url)
        except webbrowser.Error:
            opened = False
        if not opened:
            print(f"no web browser found to open; open {url} yourself", file=sys.stderr, flush=True)

    threading.Thread(target=run, daemon=True).start()
