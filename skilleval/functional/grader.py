"""``llm_grader``: skill-creator's grader contract, asked through the job's backend.

One call grades every plain-string expectation of an execution (passed + evidence each),
extracts and verifies claims, summarises user notes and critiques weak expectations. The reply
must be the JSON object of `skilleval.functional.prompts.GRADER_INSTRUCTIONS`; an invalid reply
is re-asked (``max_retries`` times, saying what was wrong) and, if still invalid, every
expectation of that sample becomes a *judge error*, never a pass or a fail.
"""
from __future__ import annotations

import hashlib
from typing import Any

from skilleval.functional.judges import JudgeInput, JudgeOutput, Verdict
from skilleval.functional.params import LlmGraderParams
from skilleval.functional.prompts import (GRADER_INSTRUCTIONS, extract_json, grader_prompt,
                                          reask_prompt, render_files, validate_grading)


class LlmGrader:
    name = "llm_grader"

    def __init__(self, params: LlmGraderParams) -> None:
        if params.samples < 1:
            from skilleval.errors import UserError
            raise UserError(f"judge.samples must be at least 1, got {params.samples}")
        self.params = params
        self.samples = params.samples

    def identity(self) -> dict[str, Any]:
        # The instructions and the reply budget change the grades, so they are part of the key.
        prompt = hashlib.sha256(GRADER_INSTRUCTIONS.encode()).hexdigest()[:16]
        return {"judge": self.name, "version": 1, "max_retries": self.params.max_retries,
                "max_tokens": self.params.max_tokens, "prompt": prompt}

    async def grade(self, item: JudgeInput) -> JudgeOutput:
        if item.backend is None:
            raise RuntimeError("llm_grader needs a backend that can complete text")
        texts = [e.text for e in item.expectations]
        # Every file the model wrote, whatever its name: `item.outputs` holds only what the
        # execution created or changed in its sandbox, never our bookkeeping (transcript.md,
        # metrics.json are written into the exported workspace, not the sandbox).
        files = render_files(item.workdir, [o.path for o in item.outputs])
        prompt = grader_prompt(item.case.prompt, texts, item.transcript, files)
        # The sample index is part of the prompt so repeated samples are distinct requests.
        if item.sample:
            prompt += f"\n(grading sample {item.sample + 1})\n"
        ask, error = prompt, ""
        calls = 0
        for _attempt in range(self.params.max_retries + 1):
            calls += 1
            try:
                reply = await item.backend.complete(ask, max_tokens=self.params.max_tokens)
            except Exception as exc:  # noqa: BLE001 - a failed call is a judge error, not a crash
                error = f"grader call failed: {type(exc).__name__}: {exc}"
                break
            try:
                data = extract_json(reply.text)
                exps = validate_grading(data, len(texts))
            except ValueError as exc:
                error = str(exc)
                ask = reask_prompt(prompt, error)
                continue
            verdicts = [Verdict(t, bool(e["passed"]), str(e.get("evidence", "")))
                        for t, e in zip(texts, exps)]
            return JudgeOutput(verdicts, claims=_list(data.get("claims")),
                               eval_feedback=data.get("eval_feedback") if isinstance(
                                   data.get("eval_feedback"), dict) else None,
                               user_notes_summary=data.get("user_notes_summary") if isinstance(
                                   data.get("user_notes_summary"), dict) else None,
                               calls=calls, attempts=calls)
        msg = f"invalid grader reply after {calls} attempt(s): {error}"
        return JudgeOutput([Verdict(t, None, "", error=msg) for t in texts], calls=calls,
                           attempts=calls)


def _list(v: Any) -> list[dict[str, Any]]:
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []
