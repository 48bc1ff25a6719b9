"""Parameters of the reporters, apart from their modules so that listing the options
(every CLI start) imports neither junitparser nor rich's tables nor the statistics."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class JunitParams:
    filename: str = "junit.xml"


@dataclass
class MarkdownParams:
    filename: str = "summary.md"
    step_summary: bool = True  # also append to $GITHUB_STEP_SUMMARY when it is set
    max_rows: int = 50


@dataclass
class JsonParams:
    filename: str = "results.json"


@dataclass
class ConsoleParams:
    show_queries: bool = True
