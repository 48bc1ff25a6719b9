"""Prompts for the grader, the blind comparator and the analyzer, and parsing their JSON replies.

Each prompt carries a task marker (`skilleval.task_marker.task_marker`), so the offline
simulator answers it through a responder registered in `skilleval.sim.agent.responders`
(the simulator imports it on first use; nothing here imports the simulator).
Sections are delimited with XML-ish tags that the responders parse back:
``<expectations>``, ``<transcript>``, ``<outputs>`` with ``<file path="...">`` children.

Contracts follow skill-creator's agents (grader.md, comparator.md, analyzer.md; see the
reference §8): burden of proof on the expectation, no partial credit, implicit claims checked,
sparse eval feedback; a blind comparator that never guesses which skill made which output.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skilleval.task_marker import task_marker

MAX_FILE_CHARS = 12000
MAX_TRANSCRIPT_CHARS = 20000


def render_files(root: Path | None, paths: list[str]) -> str:
    parts = []
    for rel in paths:
        p = (root / rel) if root is not None else Path(rel)
        try:
            text = p.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            text = f"(unreadable: {exc})"
        if len(text) > MAX_FILE_CHARS:
            text = text[:MAX_FILE_CHARS] + f"\n... ({len(text) - MAX_FILE_CHARS} more characters)"
        parts.append(f'<file path="{rel}">\n{text}\n</file>')
    return "\n".join(parts) or "(no output files were written)"


def _clip(text: str, limit: int = MAX_TRANSCRIPT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "\n... (transcript truncated)"


GRADER_INSTRUCTIONS = """You are grading one run of an AI agent on a task. Do two jobs: grade the \
outputs against each expectation, and critique the expectations themselves.

Rules:
- Read the transcript, then inspect the output files directly; do not trust the transcript's claims.
- PASS needs clear, citable evidence of real completion, not surface compliance (a file with the \
right name but wrong content fails). FAIL when there is no evidence, contradicting evidence, \
the expectation cannot be verified, or it is met only superficially or by coincidence.
- When uncertain, the burden of proof is on the expectation: FAIL. No partial credit.
- Extract implicit claims the agent makes (factual, process, quality) and verify each.
- eval_feedback: only point out expectations a wrong output would also pass, important \
outcomes nothing checks, or expectations that cannot be verified. Otherwise say "No suggestions".

Reply with ONLY one JSON object, no prose, in exactly this shape:
{"expectations": [{"text": str, "passed": bool, "evidence": str}, ...one per expectation, same order],
 "claims": [{"claim": str, "type": "factual"|"process"|"quality", "verified": bool, "evidence": str}],
 "user_notes_summary": {"uncertainties": [str], "needs_review": [str], "workarounds": [str]},
 "eval_feedback": {"suggestions": [{"assertion": str, "reason": str}], "overall": str}}"""


def grader_prompt(task: str, expectations: list[str], transcript: str, files: str) -> str:
    exp = "\n".join(f"{i + 1}. {e}" for i, e in enumerate(expectations))
    return (f"{task_marker('grader')}\n{GRADER_INSTRUCTIONS}\n\n<task>\n{task}\n</task>\n\n"
            f"<expectations>\n{exp}\n</expectations>\n\n<transcript>\n{_clip(transcript)}\n"
            f"</transcript>\n\n<outputs>\n{files}\n</outputs>\n")


def reask_prompt(original: str, error: str) -> str:
    return (f"{original}\n\nYour previous reply could not be used: {error}. Reply again with "
            "ONLY the JSON object described above, nothing else.")


COMPARATOR_INSTRUCTIONS = """You are a blind judge comparing two outputs, A and B, of the same \
task. Do not try to work out which system produced which output.

Build a rubric adapted to the task with Content (correctness, completeness, accuracy) and \
Structure (organization, formatting, usability), each criterion scored 1-5. content_score and \
structure_score are the averages; overall_score is their mean scaled to 1-10. Check the \
expectations (if any) for both outputs as secondary evidence. The winner has the higher overall \
score, then the higher expectation pass rate; answer TIE only when truly equal. Be decisive.

Reply with ONLY one JSON object:
{"winner": "A"|"B"|"TIE", "reasoning": str,
 "rubric": {"A": {"content": {"correctness": int, "completeness": int, "accuracy": int},
                  "structure": {"organization": int, "formatting": int, "usability": int},
                  "content_score": float, "structure_score": float, "overall_score": float},
            "B": {...same...}},
 "output_quality": {"A": {"score": int, "strengths": [str], "weaknesses": [str]}, "B": {...}},
 "expectation_results": {"A": {"passed": int, "total": int, "pass_rate": float,
                               "details": [{"text": str, "passed": bool}]}, "B": {...}}}"""


def comparator_prompt(task: str, expectations: list[str], files_a: str, files_b: str) -> str:
    exp = "\n".join(f"{i + 1}. {e}" for i, e in enumerate(expectations)) or "(none given)"
    return (f"{task_marker('comparator')}\n{COMPARATOR_INSTRUCTIONS}\n\n<task>\n{task}\n</task>\n\n"
            f"<expectations>\n{exp}\n</expectations>\n\n<output_a>\n{files_a}\n</output_a>\n\n"
            f"<output_b>\n{files_b}\n</output_b>\n")


ANALYZER_INSTRUCTIONS = """The blind comparison below has been unblinded. Explain why the \
winner won. Read the comparison, both skills and both transcripts. Score how well each run \
followed its skill's instructions (1-10, with issues), list the winner's strengths and the \
loser's weaknesses, and give prioritised, categorised suggestions to improve the LOSER skill. \
Be specific: quote the skills and transcripts, think about causation, prefer changes that generalise.

Reply with ONLY one JSON object:
{"comparison_summary": {"winner": "A"|"B", "winner_skill": str, "loser_skill": str, "comparator_reasoning": str},
 "winner_strengths": [str], "loser_weaknesses": [str],
 "instruction_following": {"winner": {"score": int, "issues": [str]}, "loser": {"score": int, "issues": [str]}},
 "improvement_suggestions": [{"priority": "high"|"medium"|"low",
   "category": "instructions"|"tools"|"examples"|"error_handling"|"structure"|"references",
   "suggestion": str, "expected_impact": str}],
 "transcript_insights": {"winner_execution_pattern": str, "loser_execution_pattern": str}}"""


def analyzer_prompt(comparison: dict[str, Any], winner: str, winner_skill: str, winner_body: str,
                    loser_skill: str, loser_body: str, winner_transcript: str,
                    loser_transcript: str) -> str:
    return (f"{task_marker('analyzer')}\n{ANALYZER_INSTRUCTIONS}\n\n<winner>{winner}</winner>\n"
            f"<comparison>\n{json.dumps(comparison, indent=1)}\n</comparison>\n\n"
            f'<winner_skill name="{winner_skill}">\n{winner_body or "(no skill)"}\n</winner_skill>\n\n'
            f'<loser_skill name="{loser_skill}">\n{loser_body or "(no skill)"}\n</loser_skill>\n\n'
            f"<winner_transcript>\n{_clip(winner_transcript, 8000)}\n</winner_transcript>\n\n"
            f"<loser_transcript>\n{_clip(loser_transcript, 8000)}\n</loser_transcript>\n")


BENCHMARK_ANALYZER_INSTRUCTIONS = """Read the benchmark data below and write observations a \
reader would not see from the aggregate numbers: expectations that pass (or fail) in every \
configuration and so do not discriminate, expectations that pass only with or only without the \
skill, high variance between runs (likely flaky), eval-level patterns, and time/token/tool-call \
trade-offs or outliers. Do NOT suggest changes to the skill, make subjective quality judgements, \
speculate, or repeat the aggregate numbers. Reply with ONLY a JSON array of strings."""


def benchmark_analyzer_prompt(data: dict[str, Any]) -> str:
    return (f"{task_marker('benchmark_analyzer')}\n{BENCHMARK_ANALYZER_INSTRUCTIONS}\n\n"
            f"<benchmark>\n{json.dumps(data, indent=1)}\n</benchmark>\n")


# -- reply parsing -----------------------------------------------------------------------------

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def extract_json(text: str) -> Any:
    """The JSON value in a reply (bare, or inside a ``` fence). ValueError if there is none."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for c in candidates:
        c = c.strip()
        try:
            return json.loads(c)
        except json.JSONDecodeError:
            pass
        for open_, close in (("{", "}"), ("[", "]")):
            i, j = c.find(open_), c.rfind(close)
            if 0 <= i < j:
                try:
                    return json.loads(c[i:j + 1])
                except json.JSONDecodeError:
                    pass
    raise ValueError("the reply is not valid JSON")


def validate_grading(data: Any, n: int) -> list[dict[str, Any]]:
    """Check a grader reply; return its expectations list or raise ValueError saying why."""
    if not isinstance(data, dict):
        raise ValueError("the reply must be a JSON object")
    exps = data.get("expectations")
    if not isinstance(exps, list) or len(exps) != n:
        raise ValueError(f"'expectations' must be a list of {n} items, one per expectation")
    for i, e in enumerate(exps):
        if not isinstance(e, dict) or not isinstance(e.get("passed"), bool):
            raise ValueError(f"expectations[{i}].passed must be true or false")
        if not isinstance(e.get("evidence", ""), str):
            raise ValueError(f"expectations[{i}].evidence must be a string")
    return exps


def validate_comparison(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("winner") not in ("A", "B", "TIE"):
        raise ValueError("'winner' must be \"A\", \"B\" or \"TIE\"")
    rub = data.get("rubric")
    if not isinstance(rub, dict) or not all(
            isinstance(rub.get(s), dict) and isinstance(rub[s].get("overall_score"), (int, float))
            for s in ("A", "B")):
        raise ValueError("'rubric' must give A and B an overall_score")
    return data


def validate_analysis(data: Any) -> dict[str, Any]:
    need = ("comparison_summary", "winner_strengths", "loser_weaknesses", "instruction_following",
            "improvement_suggestions")
    if not isinstance(data, dict) or any(k not in data for k in need):
        raise ValueError(f"the analysis must be an object with keys {', '.join(need)}")
    return data


def validate_notes(data: Any) -> list[str]:
    if not isinstance(data, list) or not all(isinstance(s, str) for s in data):
        raise ValueError("the reply must be a JSON array of strings")
    return data
