"""The offline proposer's sentences read as a skill author writes them: no "requests that
mention line", no "Not for explain semantic versioning", no "Use this skill when make ...",
and file extensions keep their space (".vtt", not "a.vtt")."""
from __future__ import annotations

from pathlib import Path

from skilleval.optimize import heuristic
from skilleval.skills import load_skill

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
R = heuristic.Result


def _rewrite(skill: str, results: tuple[heuristic.Result, ...], variant: int) -> str:
    s = load_skill(EXPERIMENTS / skill)
    return heuristic.rewrite(heuristic.Inputs(s.name, s.body, s.description, results), variant)


CHANGELOG = (
    R("draft the changelog from these merged PRs, list them by type", True, 0.0, False),
    R("list the PRs since v2.3 as release notes", True, 0.34, False),
    R("update CHANGELOG.md for the 2.4 release", True, 1.0, True),
    R("explain semantic versioning to me - when is something a minor vs a patch?", False, 0.67, False),
    R("set up a GitHub action that publishes to npm", False, 0.34, False),
)


def test_scope_is_said_in_the_requests_own_words() -> None:
    for variant in range(4):
        text = _rewrite("changelog-writer", CHANGELOG, variant)
        # a request that opens with what the user wants done reads "requests to <do it>",
        # with its small words kept and stopped at punctuation
        assert "requests to explain semantic versioning" in text, (variant, text)
        assert "for explain" not in text and "versioning to me" not in text, text
        assert "set github action" not in text, text


def test_shared_words_are_not_called_topics() -> None:
    for variant in range(4):
        text = _rewrite("changelog-writer", CHANGELOG, variant)
        assert "requests that mention" not in text, text
        assert '"PRs"' in text, text  # the user's spelling, not "prs"


def test_each_case_gets_the_lead_its_grammar_needs() -> None:
    minutes = (
        R("pull the action items out of this board meeting transcript", True, 0.0, False),
        R("here is the zoom transcript of our planning meeting, write minutes", True, 0.34, False),
        R("how do I turn on live captions in teams", False, 0.67, False),
    )
    for variant in range(3):
        text = _rewrite("meeting-minutes", minutes, variant)
        assert "a .vtt or .srt caption file" in text, text
        assert " when the user pastes" in text, text
    tidy = (R("dedupe this contacts csv, the header names repeat", True, 0.0, False),
            R("the csv export has duplicate header names and blank rows", True, 0.0, False),
            R("train a quick sklearn model on sales.csv", False, 1.0, False))
    for variant in range(3):
        text = _rewrite("csv-tidy", tidy, variant)
        assert " when make " not in text and " when detect " not in text and " when if " not in text, text
        assert " to make duplicate header names unique" in text, text
