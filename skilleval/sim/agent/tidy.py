"""The simulated worker behind the stub executor and the simulated API agent (not Claude).

It really does delimited-text work: it reads the input files named in the prompt, decodes,
parses, trims, dedupes, normalises headers, dates, emails and phones, splits and merges
columns, and writes the output files the prompt names (``outputs/...``), plus a
``report.json`` with the counters the prompt asks for and a ``summary.md``.

How a skill makes it better: each error-prone step has a *care point* (detecting cp1252 rather
than latin-1, deduping on a trimmed case-folded key, reading slash dates day-first per column,
stripping a BOM, parsing with the csv module, splitting names on the last space keeping
particles, keeping the first duplicate, keeping leading zeros, dropping a ``(0)`` trunk
prefix). A care point is done right with probability 0.92 when the loaded skill's instructions
mention it (a keyword in the body), else 0.5, drawn from a seeded RNG, so repeats vary and a
rerun repeats exactly. With no skill loaded, every care point is at 0.5: a sloppier job.
"""
from __future__ import annotations

import csv
import io
import json
import random
import re
from dataclasses import dataclass, field
from datetime import date, datetime

CARE_KEYWORDS = {
    "encoding": "cp1252", "dedupe_key": "case-folded", "dayfirst": "day-first", "bom": "BOM",
    "quoting": "csv` module", "name_split": "particles", "keep_first": "first occurrence",
    "leading_zeros": "leading zeros", "trunk": "(0)",
}
P_GUIDED, P_UNGUIDED = 0.92, 0.5
_OUT = re.compile(r"\boutputs/[A-Za-z0-9_.\-/]*[A-Za-z0-9_]")
_SYNONYMS = {"email": ("e_mail", "email_address", "mail"), "phone": ("phone_number", "tel", "mobile"),
             "company": ("account", "organisation", "organization", "company_name")}
_PARTICLES = {"de", "van", "von", "da", "di", "le", "du", "del", "der"}
_MONTHS = {m.lower(): i + 1 for i, m in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split())}


@dataclass
class Care:
    """Seeded draws of which care points are done right (memoised per point)."""

    rng: random.Random
    guide: str = ""  # the loaded skill's body ("" when no skill was loaded)
    drawn: dict[str, bool] = field(default_factory=dict)

    def __call__(self, point: str) -> bool:
        if point not in self.drawn:
            guided = bool(self.guide) and CARE_KEYWORDS[point].lower() in self.guide.lower()
            self.drawn[point] = self.rng.random() < (P_GUIDED if guided else P_UNGUIDED)
        return self.drawn[point]


@dataclass
class Table:
    path: str
    header: list[str]
    rows: list[list[str]]
    delimiter: str
    encoding: str
    blank: int = 0


def output_paths(prompt: str) -> list[str]:
    seen: list[str] = []
    for m in _OUT.findall(prompt):
        if m not in seen:
            seen.append(m)
    return seen


_TABLES = (".csv", ".tsv", ".txt")


def unsupported(prompt: str, input_files: "list[str] | tuple[str, ...]") -> str | None:
    """Why this worker cannot do the task, or None. It reads delimited text and writes a
    table the prompt names; asked for anything else it would only invent output."""
    if not any(f.lower().endswith(_TABLES) for f in input_files):
        return "the task has no CSV/TSV input file"
    if not any(o.lower().endswith(_TABLES) for o in output_paths(prompt)):
        return "the prompt names no CSV/TSV output under outputs/"
    return None


def input_paths(prompt: str, available: list[str]) -> list[str]:
    """Inputs in the order the prompt mentions them (then any others)."""
    order = sorted(available, key=lambda p: (prompt.find(p) if p in prompt else 10**9, p))
    return order


def decode(raw: bytes, care: Care, log: list[str]) -> tuple[str, str]:
    text_enc = "utf-8"
    if raw.startswith(b"\xef\xbb\xbf"):
        text_enc = "utf-8-sig" if care("bom") else "utf-8"
    try:
        text = raw.decode(text_enc)
    except UnicodeDecodeError:
        text_enc = "cp1252" if care("encoding") else "latin-1"
        text = raw.decode(text_enc, errors="replace")
    log.append(f"decoded as {text_enc}")
    return text, text_enc


def parse(path: str, raw: bytes, care: Care, log: list[str]) -> Table:
    text, enc = decode(raw, care, log)
    sample = text[:4096]
    try:
        delim = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        delim = "\t" if sample.count("\t") > sample.count(",") else ","
    lines = text.splitlines()
    if care("quoting"):
        rows = list(csv.reader(io.StringIO(text), delimiter=delim))
    else:
        rows = [line.split(delim) for line in lines]
        log.append("split lines on the delimiter by hand")
    header, body = (rows[0], rows[1:]) if rows else ([], [])
    kept = [r for r in body if any(c.strip() for c in r)]
    log.append(f"{path}: {len(kept)} data rows, {len(body) - len(kept)} blank, delimiter {delim!r}")
    return Table(path, header, kept, delim, enc, blank=len(body) - len(kept))


def snake(name: str) -> str:
    name = name.replace("\ufeff", "") if True else name
    return re.sub(r"_+", "_", re.sub(r"[^0-9a-z]+", "_", name.strip().lower())).strip("_")


def parse_date(value: str, dayfirst: bool) -> date | None:
    v = value.strip()
    for fmt in ("%Y-%m-%d", "%Y/%m/%d", "%Y%m%d", "%d %b %Y", "%d %B %Y", "%B %d, %Y", "%b %d, %Y"):
        try:
            return datetime.strptime(v, fmt).date()
        except ValueError:
            pass
    m = re.fullmatch(r"(\d{1,2})[/.\-](\d{1,2})[/.\-](\d{4})", v)
    if m:
        a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        d, mo = (a, b) if dayfirst or a > 12 else (b, a)
        try:
            return date(y, mo, d)
        except ValueError:
            return None
    return None


def normalise_phone(value: str, care: Care) -> str:
    v = value.strip()
    if not v:
        return v
    plus = v.startswith("+")
    if plus and care("trunk"):
        v = re.sub(r"^(\+\d{1,3})\s*\(0\)", r"\1", v)
    digits = re.sub(r"\D", "", v)
    return ("+" if plus else "") + digits


def split_name(full: str, care: Care) -> tuple[str, str]:
    parts = full.split()
    if len(parts) < 2:
        return full, ""
    if care("name_split"):
        i = len(parts) - 1
        while i > 1 and parts[i - 1] in _PARTICLES:
            i -= 1
        return " ".join(parts[:i]), " ".join(parts[i:])
    return parts[0], " ".join(parts[1:])


def tidy(prompt: str, inputs: dict[str, bytes], care: Care) -> tuple[dict[str, bytes], list[str]]:
    """Do the task the prompt describes; return ({output path: bytes}, transcript log lines)."""
    log: list[str] = []
    low = prompt.lower()
    outs = output_paths(prompt)
    data_outs = [o for o in outs if o.endswith((".csv", ".tsv", ".txt"))]
    tables = [parse(p, inputs[p], care, log) for p in input_paths(prompt, list(inputs))]
    counters: dict[str, object] = {"rows_in": sum(len(t.rows) for t in tables),
                                   "blank_rows_dropped": sum(t.blank for t in tables)}
    for t in tables:
        for tok in re.split(r"[_\-.]", t.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]):
            if tok and f"{tok}_rows" in low:
                counters[f"{tok}_rows"] = len(t.rows)
    want_cols = None
    m = re.search(r"columns\s+([a-z_]+(?:,\s*[a-z_]+)+)", prompt)
    if m:
        want_cols = [c.strip() for c in m.group(1).split(",")]
    records: list[dict[str, str]] = []
    headers: list[str] = []
    for t in tables:
        names = [snake(h) if ("snake" in low or want_cols or "header" in low) else h.strip()
                 for h in t.header]
        if not care("bom") and t.header and t.header[0].startswith("\ufeff"):
            names[0] = "\ufeff" + names[0]
        for n in names:
            if n not in headers:
                headers.append(n)
        for r in t.rows:
            rec = {n: (r[i] if i < len(r) else "") for i, n in enumerate(names)}
            rec["__raw_key__"] = next((r[i] for i, n in enumerate(names) if "mail" in n), "")
            records.append(rec)
    # clean values
    date_cols = [h for h in headers if "date" in h]
    dayfirst = care("dayfirst") and ("day/month" in low or "uk" in low.split() or any(
        re.match(r"(1[3-9]|2\d|3[01])[/\-]", (rec.get(c) or "").strip())
        for rec in records for c in date_cols))
    changed, unparseable = 0, []
    for rec in records:
        for k in list(rec):
            if k == "__raw_key__":
                continue
            v = rec[k]
            if "trim" in low or "whitespace" in low or care("quoting"):
                v = v.strip()
            if "mail" in k and "lowercase" in low:
                v = v.strip().lower()
            if "phone" in k and "digits" in low:
                v = normalise_phone(v, care)
            if k == "sku" or ("leading zero" in low and v.strip().isdigit()):
                v = v.strip() if care("leading_zeros") else str(int(v)) if v.strip().isdigit() else v
            rec[k] = v
        for c in date_cols:
            v = rec.get(c, "")
            if not v:
                continue
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
                continue
            d = parse_date(v, dayfirst)
            if d is None:
                rec[c] = ""
                first = rec[headers[0]]
                unparseable.append(int(first) if first.isdigit() else first)
            else:
                rec[c] = d.isoformat()
                changed += 1
    if date_cols:
        counters["dates_changed"] = changed
        counters["unparseable_ids"] = unparseable
        log.append(f"dates: {changed} rewritten as YYYY-MM-DD ({'day' if dayfirst else 'month'}-first)")
    # split / map columns to the requested ones
    if want_cols:
        for rec in records:
            if "first_name" in want_cols and not rec.get("first_name") and rec.get("full_name"):
                rec["first_name"], rec["last_name"] = split_name(rec["full_name"], care)
            for target, alts in _SYNONYMS.items():
                if target in want_cols and not rec.get(target):
                    rec[target] = next((rec[a] for a in alts if rec.get(a)), rec.get(target, ""))
        headers = want_cols
    # dedupe
    dupes = 0
    if any(w in low for w in ("dedupe", "one row per", "duplicate")):
        key_col = next((h for h in headers if "mail" in h), None)
        seen: dict[str, int] = {}
        kept: list[dict[str, str]] = []
        for rec in records:
            key = (rec.get(key_col, "").strip().casefold() if care("dedupe_key")
                   else rec["__raw_key__"]) if key_col else "\x00".join(rec.get(h, "") for h in headers)
            if key in seen:
                dupes += 1
                if not care("keep_first"):
                    kept[seen[key]] = rec
                continue
            seen[key] = len(kept)
            kept.append(rec)
        records = kept
        log.append(f"dedupe: {dupes} duplicates removed")
    counters["duplicates_removed"] = dupes
    counters["rows_out"] = len(records)
    outputs: dict[str, bytes] = {}
    for path in data_outs[:1]:
        tsv = path.endswith(".tsv") or (tables and tables[0].delimiter == "\t" and "tab" in low)
        buf = io.StringIO()
        w = csv.writer(buf, delimiter="\t" if tsv else ",", lineterminator="\n")
        w.writerow(headers)
        for rec in records:
            w.writerow([rec.get(h, "") for h in headers])
        outputs[path] = buf.getvalue().encode("utf-8")
        log.append(f"wrote {path}: {len(records)} rows")
    for path in outs:
        if path.endswith(".json"):
            keys = [k for k in counters if re.search(rf"\b{re.escape(k)}\b", prompt)] or list(counters)
            outputs[path] = json.dumps({k: counters[k] for k in keys}, indent=2).encode()
            log.append(f"wrote {path}")
        elif path.endswith(".md"):
            encs = sorted({t.encoding for t in tables})
            label = {"cp1252": "Windows-1252 (cp1252)", "latin-1": "latin-1 (ISO-8859-1)"}
            lines = ["# Summary", "", "Source encoding: " + ", ".join(label.get(e, e) for e in encs),
                     "", f"- rows in: {counters['rows_in']}, rows out: {len(records)}",
                     "- converted to UTF-8 without BOM; trimmed whitespace in headers and cells",
                     f"- duplicates removed: {dupes}"]
            outputs[path] = ("\n".join(lines) + "\n").encode()
            log.append(f"wrote {path}")
    return outputs, log
