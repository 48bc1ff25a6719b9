"""The simulator's answer to the ``llm`` proposer's prompt (``skilleval.optimize.prompts``).

It answers like a model would, from what the prompt says and nothing else: it reads the skill
content, the current description and the train results back out of the prompt and rewrites
with the offline proposer's `heuristic.rewrite` (a heuristic, not a model).
"""
from __future__ import annotations

import json
import re

from skilleval.optimize import heuristic
from skilleval.optimize.prompts import TASK
from skilleval.optimize.proposal import MAX_CHARS
from skilleval.sim.completion import register_responder

_ATTEMPT = re.compile(r"^<attempt current train=\d+/\d+>$")
_RESULT = re.compile(r'^\s*\[(PASS|FAIL)\] (".*") \((should(?: not)? trigger); triggered (\d+)/(\d+)\)$')
_CANDIDATE = re.compile(r"This is candidate (\d+) of (\d+)\.")
_LIMIT = re.compile(r"Hard limit: (\d+) characters")


def read_prompt(prompt: str) -> tuple[heuristic.Inputs, int, int]:
    """(inputs, variant, max_chars) recovered from a prompt built by `build_prompt`."""
    name = re.search(r'skill called "([^"]+)"', prompt)
    current = re.search(r'<current_description>\n"(.*)"\n</current_description>', prompt, re.DOTALL)
    body = re.search(r"<skill_content>\n---\n.*?\n---\n(.*)\n</skill_content>", prompt, re.DOTALL)
    tried = [json.loads(m) for m in re.findall(r"^Description: (\".*\")$", prompt, re.MULTILINE)]
    results: list[heuristic.Result] = []
    history: list[list[heuristic.Result]] = []
    block: list[heuristic.Result] | None = None
    for line in prompt.splitlines():
        if _ATTEMPT.match(line):
            block = results
        elif line.startswith("<attempt iteration="):
            history.append([])
            block = history[-1]
        elif line == "</attempt>":
            block = None
        elif block is not None and (m := _RESULT.match(line)):
            k, n = int(m.group(4)), int(m.group(5))
            block.append(heuristic.Result(json.loads(m.group(2)), m.group(3) == "should trigger",
                                          k / n if n else 0.0, m.group(1) == "PASS"))
    cand = _CANDIDATE.search(prompt)
    limit = _LIMIT.search(prompt)
    inputs = heuristic.Inputs(name.group(1) if name else "skill", body.group(1) if body else "",
                              current.group(1) if current else "", tuple(results), tuple(tried),
                              tuple(tuple(h) for h in history))
    return inputs, (int(cand.group(1)) - 1 if cand else 0), int(limit.group(1)) if limit else MAX_CHARS


def simulated_answer(prompt: str, seed: bytes) -> str:
    """What the stub backend answers to a `build_prompt` prompt (a heuristic, not a model)."""
    inputs, variant, max_chars = read_prompt(prompt)
    if "Your previous answer was rejected" in prompt:
        variant += 3
    text = ""
    for step in range(4):  # a model asked not to repeat itself tries another shape
        text = heuristic.rewrite(inputs, variant + 3 * step, max_chars=max_chars)
        if text not in inputs.tried:
            break
    opener = ("Here is a revised description that generalises from the failures."
              if seed[0] % 2 else "Based on the failures, I would broaden the intents and add scope.")
    return f"{opener}\n\n<new_description>\n{text}\n</new_description>"


register_responder(TASK, simulated_answer)
