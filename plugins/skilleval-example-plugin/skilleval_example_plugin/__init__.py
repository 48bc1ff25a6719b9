"""Example skilleval plugin: registers a backend and a reporter through skilleval's hooks."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from skilleval import hookimpl
from skilleval.backends.base import BaseBackend
from skilleval.domain import Outcome, Trial, TrialResult


@dataclass
class KeywordParams:
    model: str = "keyword-1"
    min_words: int = 0  # 0 = all words of the skill name must appear


class KeywordBackend(BaseBackend):
    """Fires the first listed skill whose name words appear in the query."""

    name = "keyword"

    def __init__(self, params: KeywordParams) -> None:
        self.params = params
        self.model = params.model

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "min_words": self.params.min_words}

    async def run_trial(self, trial: Trial) -> TrialResult:
        start = time.perf_counter()
        words = set(re.findall(r"[a-z0-9]+", trial.query.lower()))
        fired = None
        for skill in trial.listing:
            parts = skill.name.split("-")
            need = self.params.min_words or len(parts)
            if sum(p in words for p in parts) >= need:
                fired = skill.name
                break
        outcome = Outcome.TRIGGERED if fired == trial.target else Outcome.NOT_TRIGGERED
        return TrialResult(trial.key, outcome, fired=fired, position=0 if fired else None,
                           latency_ms=(time.perf_counter() - start) * 1000,
                           backend_version="keyword-1", shown=tuple(s.name for s in trial.listing))


@dataclass
class MarkdownParams:
    filename: str = "results.md"


class MarkdownReporter:
    def __init__(self, params: MarkdownParams) -> None:
        self.params = params

    def report(self, job: Any, kind: str, payload: Any) -> None:
        if kind != "trigger_eval":
            return
        lines = [f"# {payload.skill.name}", "", "| query | expected | rate | verdict |", "|---|---|---|---|"]
        for q in payload.results:
            rate = "n/a" if q.trigger_rate is None else f"{q.trigger_rate:.2f}"
            query = q.case.query.replace("|", "\\|")
            lines.append(f"| {query} | {q.case.should_trigger} | {rate} | {q.verdict} |")
        (job.output_dir / self.params.filename).write_text("\n".join(lines) + "\n", encoding="utf-8")


@hookimpl
def register_backends(register) -> None:  # noqa: ANN001
    register("keyword", KeywordBackend, params=KeywordParams,
             help="baseline: fires a skill when its name words appear in the query")


@hookimpl
def register_reporters(register) -> None:  # noqa: ANN001
    register("md_table", MarkdownReporter, params=MarkdownParams, help="results.md table")
