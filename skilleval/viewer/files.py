"""Safe access to recorded files, and how each output file is shown.

Containment: a file is served only if its *resolved* path lies inside one of the allowed
roots (the store and the recorded workspaces). ``..``, absolute paths, NUL bytes and symlinks
that resolve outside are refused. Rendering never produces markup: every descriptor carries
plain data (text, rows of cells) that the page puts into the DOM as text.
"""
from __future__ import annotations

import base64
import csv
import io
import json
import mimetypes
import os
import shutil
import subprocess
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Iterator

from skilleval.textfiles import shown_name

TEXT_MAX = 200_000          # characters of a text file shown inline
TABLE_ROWS = 500            # rows of a CSV/TSV/XLSX table shown inline
TABLE_COLS = 60
MAX_SHEETS = 10             # sheets of a workbook shown inline
INLINE_BINARY_MAX = 2_000_000  # bytes of an image embedded in a static report
HIDDEN = {"transcript.md", "metrics.json", "user_notes.md"}  # skill-creator hides these too

CODE = {".py", ".js", ".ts", ".tsx", ".jsx", ".sh", ".rb", ".go", ".rs", ".java", ".c", ".cpp",
        ".h", ".hpp", ".sql", ".r", ".css", ".html", ".xml", ".yaml", ".yml", ".toml", ".ini"}
TEXT = {".txt", ".md", ".log", ".rst", ""}
IMAGES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
          ".webp": "image/webp"}  # no SVG: it is a document that can carry script


class Refused(ValueError):
    """A path outside the allowed roots, or malformed."""


def contained(roots: Iterable[Path], rel: str, base: Path | None = None) -> Path:
    """The real path of `rel` under `base` (or under one of `roots`) if it stays inside."""
    # no drive-letter rule: on POSIX "summary 10:30.txt" is a name an agent writes, and the
    # resolved path's containment below is what keeps a request inside
    if not rel or "\x00" in rel or rel.startswith(("/", "\\")):
        raise Refused(f"not a relative path: {rel!r}")
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    if any(p in ("..", "") for p in parts):
        raise Refused(f"path traversal refused: {rel!r}")
    real_roots = [r.resolve() for r in roots]
    start = (base or real_roots[0]).resolve()
    target = (start / Path(*parts)).resolve()
    if not any(target == r or r in target.parents for r in real_roots):
        raise Refused(f"outside the recorded folders: {rel!r}")
    return target


def tree(folder: Path, roots: Iterable[Path]) -> list[str]:
    """Relative paths of the files under `folder` that can be shown (see `listing`)."""
    return [rel for rel, problem in listing(folder, roots) if problem is None]


def listing(folder: Path, roots: Iterable[Path]) -> list[tuple[str, str | None]]:
    """Every entry under `folder` (nested folders included) as (relative path, why it is not
    shown or None), hidden bookkeeping files left out. Why the refused ones are listed too: an
    agent's output that is a link out of the recorded folders, a link to nothing or a FIFO is
    part of what it did, and a reviewer who is to see every output must see that it is there."""
    roots = list(roots)
    out: list[tuple[str, str | None]] = []
    if not folder.is_dir():
        return out
    refused_dirs: list[str] = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if (p.name in HIDDEN and p.parent == folder) or any(rel.startswith(d + "/") for d in refused_dirs):
            continue
        try:
            real = contained(roots, rel, folder)
        except Refused:
            refused_dirs.append(rel)
            out.append((rel, f"not shown: a link to {_link_target(p)}, outside the recorded folders"))
            continue
        if real.is_file():
            out.append((rel, None))
        elif p.is_symlink() and not real.exists():
            out.append((rel, f"not shown: a link to {_link_target(p)}, which does not exist"))
        elif not real.is_dir():
            out.append((rel, "not shown: not a regular file (a device, FIFO or socket)"))
    return out


def _link_target(path: Path) -> str:
    try:
        return repr(shown_name(os.readlink(path)))
    except OSError:  # not itself a link: a folder on the way out is
        return "a place"


def _decode(data: bytes) -> tuple[str, str | None]:
    """Text and the encoding used: UTF-8, else Windows-1252 (what legacy exports use), with
    replacement characters for bytes it does not define."""
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace"), "not UTF-8; shown as Windows-1252"


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def describe(path: Path, rel: str, *, url: str | None, inline_binary: bool) -> dict[str, Any]:
    """A descriptor the page renders: kind + plain data. `url` is where the raw file can be
    downloaded (live server); in a static report binaries are embedded up to a cap."""
    ext = path.suffix.lower()
    size = path.stat().st_size
    d: dict[str, Any] = {"name": shown_name(rel), "size": size, "url": url, "kind": "binary"}
    if inline_binary:  # a static report links no file: a cut one says where the whole file is
        d["full_path"] = str(path)
    try:
        if ext in IMAGES:
            d.update(kind="image", mime=IMAGES[ext])
            if inline_binary and size <= INLINE_BINARY_MAX:
                d["data_uri"] = f"data:{IMAGES[ext]};base64," + base64.b64encode(path.read_bytes()).decode()
            return d
        if ext == ".xlsx":
            return {**d, **_xlsx(path)}
        if ext == ".pdf":
            return {**d, **_pdf(path, inline_binary)}
        data = path.read_bytes()[: TEXT_MAX * 4]
        if _is_binary(data):
            if inline_binary and size <= INLINE_BINARY_MAX:
                d["data_uri"] = "data:application/octet-stream;base64," + base64.b64encode(path.read_bytes()).decode()
            return d
        text, enc = _decode(data)
        truncated = size > len(data) or len(text) > TEXT_MAX
        text = text[:TEXT_MAX]
        d.update(encoding=enc, truncated=truncated)
        if ext in (".csv", ".tsv"):
            return {**d, **_table(text, "\t" if ext == ".tsv" else ",", cut=truncated)}
        if ext == ".json":
            try:
                return {**d, "kind": "json", "text": json.dumps(json.loads(text), indent=2, ensure_ascii=False)}
            except ValueError:
                return {**d, "kind": "text", "text": text}
        kind = "markdown" if ext == ".md" else "code" if ext in CODE else "text"
        return {**d, "kind": kind, "text": text}
    except OSError as exc:
        return {**d, "kind": "error", "text": f"cannot read: {exc}"}


def _table(text: str, delim: str, *, cut: bool = False) -> dict[str, Any]:
    """Rows of a CSV/TSV text. `cut`: the text cap cut the file, so its last record may be a
    fragment (a number cut in half would read as a whole value): it is left out, and the page
    says rows are missing."""
    if cut:
        text = text[: text.rfind("\n") + 1]  # whole lines only
    lines = io.StringIO(text).readlines()
    taken = 0  # lines the reader has taken so far

    def feed() -> Iterator[str]:
        nonlocal taken
        for line in lines:
            taken += 1
            yield line
    rows, more, wide, last_start = [], False, 0, 0
    try:
        reader = csv.reader(feed(), delimiter=delim)
        while True:
            start = taken
            row = next(reader, None)
            if row is None:
                break
            if len(rows) >= TABLE_ROWS:
                more = True
                break
            last_start = start
            wide = max(wide, len(row))
            rows.append(row[:TABLE_COLS])
    except csv.Error as exc:
        return {"kind": "text", "text": text, "note": f"not a valid table: {exc}"}
    if cut and rows and not more and _open_quote("".join(lines[last_start:]), delim):
        rows.pop()  # the cap fell inside a quoted cell that spans lines
    # what the inline table leaves out is said on the page (download for the rest)
    return {"kind": "table", "rows": rows, "text": text, "more_rows": more or cut,
            "more_cols": max(0, wide - TABLE_COLS)}


def _open_quote(record: str, delim: str) -> bool:
    """True when `record` (one record's lines) ends inside a quoted cell."""
    try:
        list(csv.reader(io.StringIO(record), delimiter=delim, strict=True))
    except csv.Error:
        return True
    return False


def _xlsx(path: Path) -> dict[str, Any]:
    try:
        import openpyxl  # optional: `pip install "skilleval[xlsx]"`
    except ImportError:
        return {"kind": "binary", "note": "install skilleval[xlsx] (openpyxl) to see XLSX tables"}
    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - a broken workbook is shown as such
        return {"kind": "error", "text": f"cannot read workbook: {type(exc).__name__}: {exc}"}
    sheets = []
    for ws in wb.worksheets[:MAX_SHEETS]:
        rows, more, wide = [], False, 0
        for i, row in enumerate(ws.iter_rows(values_only=True)):
            if i >= TABLE_ROWS:
                more = True
                break
            wide = max(wide, len(row))
            rows.append(["" if v is None else str(v) for v in row[:TABLE_COLS]])
        sheets.append({"name": ws.title, "rows": rows, "more_rows": more,
                       "more_cols": max(0, wide - TABLE_COLS)})
    more_sheets = max(0, len(wb.worksheets) - MAX_SHEETS)
    wb.close()
    return {"kind": "sheets", "sheets": sheets, "more_sheets": more_sheets}


def _pdf(path: Path, inline: bool) -> dict[str, Any]:
    """A download link, and the first page as a PNG when poppler's pdftoppm is installed
    (pdf.js would be a 1 MB script for a preview; we keep the page light)."""
    out: dict[str, Any] = {"kind": "pdf"}
    exe = shutil.which("pdftoppm")
    if exe is None:
        out["note"] = "first-page preview needs pdftoppm (poppler-utils); download the file to read it"
        return out
    with tempfile.TemporaryDirectory() as tmp:
        try:
            subprocess.run([exe, "-png", "-f", "1", "-l", "1", "-r", "60", "-singlefile", str(path),
                            str(Path(tmp) / "page")], check=True, timeout=20, capture_output=True,
                           stdin=subprocess.DEVNULL)
            png = (Path(tmp) / "page.png").read_bytes()
        except (OSError, subprocess.SubprocessError) as exc:
            out["note"] = f"no preview: {type(exc).__name__}"
            return out
    out["preview_uri"] = "data:image/png;base64," + base64.b64encode(png).decode()
    return out


def guess_mime(path: Path) -> str:
    ext = path.suffix.lower()
    if ext in IMAGES:
        return IMAGES[ext]
    if ext == ".pdf":
        return "application/pdf"
    mime = mimetypes.guess_type(path.name)[0]
    # Anything that a browser could run as a document is served as an attachment of bytes.
    return "application/octet-stream" if not mime or "html" in mime or "svg" in mime or \
        "xml" in mime or "javascript" in mime else mime
