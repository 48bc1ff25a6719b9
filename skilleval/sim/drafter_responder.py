"""The simulator's answer to the LLM drafter's prompt (``skilleval.evalsets.llm``).

It reads what the prompt asks for (the skill, its competitors, how many queries of each class,
what was already accepted) back out of the prompt and answers with the offline drafter's rows.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skilleval.domain import Skill
from skilleval.evalsets.llm import TASK
from skilleval.evalsets.offline import draft_offline
from skilleval.evalsets.similar import is_near
from skilleval.sim.completion import register_responder


def _read_prompt(prompt: str) -> tuple[Skill, list[Skill], int, int, list[str]]:
    name = re.search(r"for a Claude Code skill called (\".*?\")\. Claude", prompt)
    desc = re.search(r"^description: (\".*\")$", prompt, re.MULTILINE)
    body = re.search(r"<skill_content>\n---\n.*?\n---\n(.*?)\n</skill_content>", prompt, re.DOTALL)
    comps = re.search(r"<competitors>\n(.*?)</competitors>", prompt, re.DOTALL)
    counts = re.search(r"should_trigger=true: (\d+); should_trigger=false: (\d+)\.", prompt)
    accepted = re.search(r"Already accepted.*?:\n(.*?)(?:\n\n|\Z)", prompt, re.DOTALL)
    skill = Skill(json.loads(name.group(1)) if name else "skill",
                  json.loads(desc.group(1)) if desc else "", body.group(1) if body else "", Path("."), {})
    competitors = []
    for line in (comps.group(1).splitlines() if comps else []):
        if m := re.match(r'^- (".*?"): (".*")$', line):
            competitors.append(Skill(json.loads(m.group(1)), json.loads(m.group(2)), "", Path("."), {}))
    seen = [json.loads(x) for x in re.findall(r"^- (\".*\")$", accepted.group(1), re.MULTILINE)] if accepted else []
    pos, neg = (int(counts.group(1)), int(counts.group(2))) if counts else (10, 10)
    return skill, competitors, pos, neg, seen


def simulated_answer(prompt: str, seed: bytes) -> str:
    """What the stub backend and serve-sim answer: the offline drafter's rows for what the
    prompt asks (a baseline, not a model). One answer in five opens with a sentence of prose
    before the JSON, as chatty models do, which the strict parser must refuse and re-ask."""
    skill, competitors, pos, neg, seen = _read_prompt(prompt)
    rows = draft_offline(skill, competitors, (pos + neg) * 2 + 4, pos + 2, seed=int.from_bytes(seed[:4], "big"))
    out: list[dict[str, Any]] = []
    want = {True: pos, False: neg}
    for r in rows:
        if want[r["should_trigger"]] > 0 and not is_near(r["query"], seen):
            want[r["should_trigger"]] -= 1
            out.append({k: r[k] for k in ("query", "should_trigger", "rationale", "span")})
    text = json.dumps(out, ensure_ascii=False, indent=1)
    if seed[1] % 5 == 0 and "Your previous answer had problems" not in prompt:
        return "Sure! Here are the queries you asked for:\n" + text
    return text


register_responder(TASK, simulated_answer)
