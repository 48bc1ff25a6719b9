"""Example skilleval judges: a typed `word_count` check and a lexical `keyword_grader`.

A judge is built by its factory from a params dataclass (fields become Hydra keys such as
``judge.min_share=0.8``) and implements ``identity()`` and ``async grade(item)``; see
``skilleval.functional.judges`` for the protocol.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skilleval import hookimpl
from skilleval.execution import resolve_inside
from skilleval.functional.judges import JudgeInput, JudgeOutput, Verdict

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9']{3,}")


@dataclass
class WordCountParams:
    """word_count takes its limits from the expectation: {type, path, max?, min?}."""


class WordCount:
    name = "word_count"
    samples = 1
    deterministic = True  # counts words in a file, asks no model: still grades after a budget stop

    def __init__(self, params: WordCountParams) -> None:
        self.params = params

    def identity(self) -> dict[str, Any]:
        return {"judge": self.name, "version": 1}

    async def grade(self, item: JudgeInput) -> JudgeOutput:
        out = []
        for e in item.expectations:
            spec = e.spec or {}
            try:  # only files inside the run's sandbox (no .., absolute paths or symlinks out)
                path = resolve_inside(item.workdir, str(spec.get("path", "")))
            except PermissionError as exc:
                out.append(Verdict(e.text, False, str(exc)))
                continue
            if not path.is_file():
                out.append(Verdict(e.text, False, f"{spec.get('path')} was not written"))
                continue
            n = len(path.read_text(encoding="utf-8", errors="replace").split())
            lo, hi = spec.get("min", 0), spec.get("max")
            ok = n >= lo and (hi is None or n <= hi)
            out.append(Verdict(e.text, ok, f"{spec.get('path')} has {n} words (allowed {lo}..{hi if hi is not None else 'inf'})"))
        return JudgeOutput(out)


@dataclass
class KeywordGraderParams:
    min_share: float = 0.6  # share of an expectation's content words that must occur in the outputs


class KeywordGrader:
    name = "keyword_grader"
    samples = 1
    deterministic = True

    def __init__(self, params: KeywordGraderParams) -> None:
        self.params = params

    def identity(self) -> dict[str, Any]:
        return {"judge": self.name, "version": 1, "min_share": self.params.min_share}

    async def grade(self, item: JudgeInput) -> JudgeOutput:
        corpus = "\n".join((item.workdir / o.path).read_text(encoding="utf-8", errors="replace").lower()
                           for o in item.outputs if (item.workdir / o.path).is_file())
        out = []
        for e in item.expectations:
            words = {w.lower() for w in _WORD.findall(e.text)}
            hits = sorted(w for w in words if w in corpus)
            share = len(hits) / len(words) if words else 0.0
            out.append(Verdict(e.text, share >= self.params.min_share,
                               f"{len(hits)}/{len(words)} keywords found ({', '.join(hits[:5])})"))
        return JudgeOutput(out)


@hookimpl
def register_judges(register) -> None:  # noqa: ANN001
    register("word_count", WordCount, params=WordCountParams,
             help="typed check {type: word_count, path, max?, min?} (example plugin)")
    register("keyword_grader", KeywordGrader, params=KeywordGraderParams,
             help="lexical grader for plain-string expectations (example plugin)")
