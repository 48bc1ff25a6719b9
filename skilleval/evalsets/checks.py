"""Quality checks of a trigger eval set (``skilleval check-evals``, and warnings before
``trigger_eval`` / ``trigger_opt``).

Each finding names the entries it is about (``entry 3 (q003)``):

* **duplicates** — exact, equal after case/whitespace/punctuation, or near-duplicates by
  similarity (`skilleval.evalsets.similar`); a pair with opposite labels says so;
* **balance** — the share of the smaller class under 40 %, or a class missing;
* **leaky** — a query naming the skill outright (`text.names_skill`);
* **cross-split** — near-duplicates in different train/validation/test splits (a test query
  that is a paraphrase of a train query is not held out);
* **never discriminates** — from stored runs (DuckDB over the store's ``trials`` view, judged by the file's labels), a
  query that passed under every one of two or more descriptions tried by the same backend and
  model: it cannot tell them apart. Errors and timeouts are left out of the verdicts (never
  counted as a "no").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from skilleval.evalsets.similar import DEFAULT_THRESHOLD, similar_pairs
from skilleval.evalsets.text import names_skill

MIN_SHARE = 0.4


@dataclass(frozen=True)
class Finding:
    kind: str       # duplicate | near-duplicate | balance | leaky | cross-split | never-discriminates | store
    message: str
    entries: tuple[str, ...] = ()
    level: str = "warning"  # warning | info

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "level": self.level, "message": self.message, "entries": list(self.entries)}


def label(i: int, row: dict[str, Any]) -> str:
    return f"entry {i} ({row['id']})" if row.get("id") else f"entry {i}"


def _short(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def duplicate_findings(rows: Sequence[dict[str, Any]], threshold: float = DEFAULT_THRESHOLD,
                       groups: Sequence[str] | None = None) -> list[Finding]:
    out = []
    for p in similar_pairs([r["query"] for r in rows], threshold, groups):
        a, b = rows[p.a], rows[p.b]
        la, lb = label(p.a, a), label(p.b, b)
        clash = " with opposite should_trigger labels" if a["should_trigger"] != b["should_trigger"] else ""
        if groups is not None:
            out.append(Finding("cross-split", f"{la} [{groups[p.a]}] and {lb} [{groups[p.b]}] are "
                               f"{p.kind}s across splits (similarity {p.score:.0f}){clash}: "
                               f"{_short(a['query'])!r} / {_short(b['query'])!r}", (la, lb)))
        else:
            kind = "near-duplicate" if p.kind == "near-duplicate" else "duplicate"
            out.append(Finding(kind, f"{la} and {lb}: {p.kind} (similarity {p.score:.0f}){clash}: "
                               f"{_short(a['query'])!r} / {_short(b['query'])!r}", (la, lb)))
    return out


def balance_finding(rows: Sequence[dict[str, Any]]) -> Finding:
    pos = sum(1 for r in rows if r["should_trigger"])
    neg = len(rows) - pos
    share = min(pos, neg) / len(rows) if rows else 0.0
    msg = f"{pos} should trigger / {neg} should not ({pos / max(1, len(rows)):.0%} positive)"
    if pos == 0 or neg == 0:
        return Finding("balance", msg + "; one class is missing, so recall or precision is undefined")
    if share < MIN_SHARE:
        return Finding("balance", msg + f"; the smaller class is under {MIN_SHARE:.0%}, so its rate "
                       "rests on few queries (aim for about half each)")
    return Finding("balance", msg, level="info")


def leaky_findings(rows: Sequence[dict[str, Any]], skill_name: str | None) -> list[Finding]:
    if not skill_name:
        return []
    out = []
    for i, r in enumerate(rows):
        if names_skill(r["query"], skill_name):
            out.append(Finding("leaky", f"{label(i, r)} names the skill {skill_name!r} outright "
                               f"(users rarely do; it tests the name, not the description): "
                               f"{_short(r['query'])!r}", (label(i, r),)))
    return out


def stored_findings(rows: Sequence[dict[str, Any]], skill_name: str | None, store_root: Path | None,
                    threshold: float = 0.5) -> list[Finding]:
    """Queries that passed under every description tried (two or more) in stored trials."""
    if not skill_name or store_root is None:
        return []
    import pyarrow as pa

    from skilleval.store.catalog import Store

    store = Store(store_root)
    if "trials" not in store.tables():
        return [Finding("store", f"no stored runs under {store_root}: discrimination not checked", level="info")]
    import duckdb  # only now: a store with no trials needs no DuckDB

    con = store.connect()
    try:
        # typed: pyarrow infers a type by asking pandas (store.pandas_probe)
        # the label is the file's, not the one stored with old runs (the author may have fixed it)
        labels = {r["query"]: bool(r["should_trigger"]) for r in rows}
        con.register("wanted", pa.table({"q": pa.array(list(labels), pa.string()),
                                         "st": pa.array(list(labels.values()), pa.bool_())}))
        # Descriptions are compared within one backend and model: verdicts of description A
        # on one model and B on another differ by the model as much as by the description.
        result = con.execute(
            """WITH per AS (
                 SELECT query, any_value(wanted.st) AS should_trigger, backend, model, description,
                        count(*) FILTER (WHERE outcome IN ('triggered', 'not_triggered')) AS valid,
                        count(*) FILTER (WHERE outcome = 'triggered') AS hits
                 FROM trials JOIN wanted ON trials.query = wanted.q WHERE skill = ?
                 GROUP BY query, backend, model, description)
               SELECT query, concat_ws(' ', backend, model), count(*) AS descriptions,
                      bool_and(CASE WHEN should_trigger THEN hits >= ? * valid
                                    ELSE hits < ? * valid END) AS always
               FROM per WHERE valid > 0 GROUP BY query, backend, model""",
            [skill_name, threshold, threshold]).fetchall()
    except duckdb.Error as exc:
        return [Finding("store", f"could not read stored runs ({str(exc).splitlines()[0]}); "
                        "discrimination not checked")]
    finally:
        con.close()
    # per query: (backend and model, descriptions it judged, passed under all of them)
    seen: dict[str, list[tuple[str, int, bool]]] = {}
    for query, judge, n, always in result:
        if n >= 2:
            seen.setdefault(query, []).append((judge, n, always))
    out = []
    for i, r in enumerate(rows):
        compared = sorted(seen.get(r["query"], []))
        if compared and all(always for _, _, always in compared):
            where = ", ".join(f"{n} on {judge}" for judge, n, _ in compared)
            out.append(Finding("never-discriminates", f"{label(i, r)} passed under every description "
                               f"tried in stored runs ({where}); it cannot tell them apart: "
                               f"{_short(r['query'])!r}", (label(i, r),)))
    if not seen:
        out.append(Finding("store", "fewer than two descriptions of this skill judged by one backend "
                           "and model in stored runs: discrimination not checked yet", level="info"))
    return out


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "warning"]


def check_rows(rows: Sequence[dict[str, Any]], *, skill_name: str | None = None,
               store_root: Path | None = None, splits: Sequence[str] | None = None,
               threshold: float = DEFAULT_THRESHOLD, trigger_threshold: float = 0.5) -> Report:
    """Every check. `splits`: one label per row (train/validation/test) for cross-split pairs;
    by default the rows' own ``split`` keys when every row has one."""
    rep = Report()
    rep.findings += duplicate_findings(rows, threshold)
    if splits is None and rows and all(r.get("split") for r in rows):
        splits = [str(r["split"]) for r in rows]
    if splits is not None:
        rep.findings += duplicate_findings(rows, threshold, groups=splits)
    rep.findings.append(balance_finding(rows))
    rep.findings += leaky_findings(rows, skill_name)
    rep.findings += stored_findings(rows, skill_name, store_root, trigger_threshold)
    return rep
