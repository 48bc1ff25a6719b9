"""Shared trial material for backend tests (a plain module, not a fixture file)."""
from __future__ import annotations

import asyncio
from typing import Any, Sequence

from skilleval.backends.stub import StubBackend, StubParams
from skilleval.domain import ListedSkill, Trial, TrialResult

PDF = ListedSkill("pdf-form-filler", "Fill in PDF forms (AcroForm fields) from user-provided data. "
                  "Use when the user asks to fill, complete or populate a PDF form.")
CSV = ListedSkill("csv-summarizer", "Summarize CSV files with pandas. Use when the user asks for "
                  "statistics about a CSV file.")
QUERIES = ["Please fill in the PDF form tax.pdf with my name John Doe",
           "give me summary statistics about sales.csv",
           "What is the capital of France?",
           "populate the fields of this pdf form for me",
           "summarize the columns of the csv file with pandas",
           "-fill the pdf form and the csv statistics"]
SECRET = "sk-ant-api03-TESTSECRET-0123456789abcdefXYZ"


def trials(model: str = "sim-1", repeats: int = 2, queries: Sequence[str] = QUERIES,
           listing: tuple[ListedSkill, ...] = (CSV, PDF), prefix: str = "t") -> list[Trial]:
    bodies = (("pdf-form-filler", "# PDF form filler\nInspect the fields, then fill them.\n"),)
    return [Trial(f"{prefix}{i}-{r}", f"c{i}", q, PDF.name, listing, r, model, bodies)
            for i, q in enumerate(queries) for r in range(repeats)]


def stub_results(items: list[Trial], model: str = "sim-1") -> list[TrialResult]:
    stub = StubBackend(StubParams(model=model))

    async def run() -> list[TrialResult]:
        return list(await asyncio.gather(*(stub.run_trial(t) for t in items)))

    return asyncio.run(run())


def verdicts(results: list[TrialResult]) -> list[tuple[Any, Any]]:
    return [(r.outcome.value, r.fired) for r in results]
