"""Data shown in a terminal is hostile: escape it for rich and make control characters visible.

Queries, skill names, model output and stored text can hold rich markup (``[/]`` crashes a
render with MarkupError; ``[link=file:///etc/passwd]`` becomes a live hyperlink) and raw
control sequences (``ESC[2J`` clears the screen, ``ESC]0;`` retitles the window, a bidi
override reorders what the reader sees). `safe` is for text interpolated into rich markup;
`visible` is for plain ``print`` (error lines; `sql`'s CSV and JSON only on a terminal: piped,
they are data for programs and written exactly).
"""
from __future__ import annotations

import re

from rich.console import Console
from rich.markup import escape

# C0 controls except tab and newline, DEL, C1 controls, and the Unicode bidi overrides/isolates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """`text` with every control character written out (``\\x1b``), never executed."""
    return _CONTROL.sub(_show, str(text))


def visible_line(text: object) -> str:
    """`visible`, and newlines too: for one-line messages (an error line stays one line)."""
    return visible(text).replace("\n", "\\n")


def json_visible(text: str) -> str:
    """JSON text with the control characters JSON leaves raw (C1, bidi overrides) escaped as
    ``\\u009b``: still valid JSON (they occur only inside strings), never executed."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def safe(text: object) -> str:
    """`text` ready to interpolate into rich markup: controls visible, markup escaped."""
    return escape(visible(text))


class PlainConsole(Console):
    """A rich Console that prints data as it is: rich's emoji codes are off, so a query's
    ``root:x:0:0`` or ``:warning:`` is not shown as ``root❌0:0`` and ``⚠`` (escaping markup
    does not stop them). Every console of the command line is one of these."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("emoji", False)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


class RunConsole(PlainConsole):
    """A job's console (stdout or stderr): when the reader leaves (``| head``), the run goes
    on and ends with its own status and exit code; what it would still have printed is
    dropped. Elsewhere a closed pipe ends the command (cli: one line, exit 2), but a run whose
    trials are stored must not be marked failed, or exit as bad input, over its printing."""

    def on_broken_pipe(self) -> None:
        import os
        import sys

        self.quiet = True
        stream = sys.stderr if self.stderr else sys.stdout
        devnull = os.open(os.devnull, os.O_WRONLY)  # later plain prints go nowhere, quietly
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
