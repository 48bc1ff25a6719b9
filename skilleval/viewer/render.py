"""The HTML shell of both the live viewer and the static report (Jinja2, autoescaped).

The page itself is built in the browser from JSON, with DOM text nodes only (see
``static/core.js``); the shell carries the Content-Security-Policy, the data block, and the
scripts. Data goes into a ``<script type="application/json">`` block with ``<``, ``>``, ``&``
and the JS line separators escaped as ``\\uXXXX`` (so ``</script>`` in a model's output cannot
end the block), and it is parsed with ``JSON.parse``, never evaluated. The static report
inlines the scripts and style and allows exactly those by their SHA-256 hashes; it has no
``connect-src`` at all, so the page cannot reach the network.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

HERE = Path(__file__).parent
STATIC = HERE / "static"
# Chart.js 4.5.1 (MIT), vendored unmodified from npm; see static/vendor/README.md.
CHART_JS_SHA256 = "48444a82d4edcb5bec0f1965faacdde18d9c17db3063d042abada2f705c9f54a"
SCRIPTS = ("vendor/chart.umd.min.js", "core.js", "runs.js", "trigger.js", "opt.js", "functional.js",
           "routing.js", "attribute.js")

LIVE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'")


@lru_cache(maxsize=1)
def _env() -> Environment:
    return Environment(loader=FileSystemLoader(HERE / "templates"),
                       autoescape=select_autoescape(default=True, default_for_string=True))


def _clean(value: Any) -> Any:
    """NaN and infinities as null: they are not JSON, and JSON.parse would reject the page."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def to_json(data: Any) -> str:
    """Strict JSON (no NaN); the recursive clean-up runs only when a non-finite float is there.
    A lone surrogate (a non-UTF-8 byte of a file or folder name) cannot be encoded to the
    page: shown as U+FFFD instead of failing the whole answer."""
    try:
        text = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_clean(data), ensure_ascii=False, default=str, separators=(",", ":"))
    return _SURROGATE.sub("\ufffd", text)


def script_json(data: Any) -> Markup:
    """JSON that is safe inside a <script type="application/json"> element."""
    text = to_json(data)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return Markup(text)  # noqa: S704 - escaped above for the script-data context


@lru_cache(maxsize=None)
def _asset(name: str) -> str:
    code = (STATIC / name).read_text(encoding="utf-8")
    low = code.lower()
    # Our own files only; refuse anything that could end or confuse an inline <script>.
    if "</script" in low or "<!--" in low or "<script" in low or "</style" in low:
        raise ValueError(f"asset {name} cannot be inlined safely")
    return code


def _sha(code: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode() + "'"


def live_page(title: str = "skilleval view", subtitle: str = "live") -> str:
    return _env().get_template("page.html").render(
        csp=LIVE_CSP, title=title, subtitle=subtitle, inline=False, data=script_json({"mode": "live"}),
        scripts=[{"name": s} for s in SCRIPTS])


def static_page(data: dict[str, Any], title: str, subtitle: str) -> str:
    scripts = [{"name": s, "code": Markup(_asset(s))} for s in SCRIPTS]  # noqa: S704 - our files
    css = _asset("app.css")
    csp = ("default-src 'none'; script-src " + " ".join(_sha(str(s["code"])) for s in scripts) +
           f"; style-src {_sha(css)}; img-src data:; base-uri 'none'; form-action 'none'")
    return _env().get_template("page.html").render(
        csp=csp, title=title, subtitle=subtitle, inline=True, css=Markup(css),  # noqa: S704
        data=script_json({"mode": "static", **data}), scripts=scripts)
