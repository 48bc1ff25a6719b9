"""Coverage: which scope clauses of a skill the eval set exercises, and which it leaves out.

The description and the body's "use when…" / "not for…" statements are split into clauses
(`skilleval.evalsets.text.scope_clauses`). A query covers a clause when the polarities agree
(a "use" clause needs a should-trigger query, a "not for" clause a should-not one) and the
query says what the clause says: the clause's words appear in the query (fuzzy partial match
of at least 85, so a typo still counts) or enough of its content words (stemmed) do: one of a
clause of one or two, two of one up to five, a third of a long one (more than five).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from rapidfuzz import fuzz

from skilleval.domain import Skill
from skilleval.evalsets.similar import normalise
from skilleval.evalsets.text import Clause, content_stems, scope_clauses


@dataclass
class ClauseCoverage:
    clause: Clause
    queries: list[str] = field(default_factory=list)  # ids of covering queries

    def to_dict(self) -> dict[str, Any]:
        return {"clause": self.clause.text, "polarity": self.clause.polarity,
                "span": self.clause.span, "queries": self.queries}


def covers(clause: Clause, query: str) -> bool:
    words = content_stems(clause.text)
    if not words:
        return False
    text, asked = normalise(clause.text), normalise(query)
    # partial_ratio slides the shorter string along the longer one: the clause must be the
    # shorter (or about as long, for a typo), or "x" covered every clause with "next" in it
    if len(text) >= 8 and len(asked) >= 0.9 * len(text) and fuzz.partial_ratio(text, asked) >= 85:
        return True
    need = 1 if len(words) <= 2 else 2 if len(words) <= 5 else math.ceil(len(words) / 3)
    return len(words & content_stems(query)) >= need


def coverage(skill: Skill, rows: Sequence[dict[str, Any]]) -> list[ClauseCoverage]:
    """Every clause with the ids of the queries that exercise it."""
    out = []
    for clause in scope_clauses(skill):
        want = clause.polarity == "use"
        cov = ClauseCoverage(clause)
        for i, row in enumerate(rows):
            if bool(row.get("should_trigger")) == want and covers(clause, str(row.get("query", ""))):
                cov.queries.append(str(row.get("id") or f"entry {i}"))
        out.append(cov)
    return out


def query_clauses(cov: Sequence[ClauseCoverage]) -> dict[str, list[str]]:
    """Query id -> the clauses it covers (for the review page)."""
    out: dict[str, list[str]] = {}
    for c in cov:
        for q in c.queries:
            out.setdefault(q, []).append(c.clause.text)
    return out
