"""Simulated answers to the grader, comparator and analyzers' prompts (offline; not Claude).

Every answer is derived from the prompt's content only, by lexical rules:

* **grader**: an expectation's *checkable literals* (quoted text, e-mail addresses, dates,
  numbers of 4+ digits, ``X became Y`` targets) must all appear in the output files quoted in
  the prompt, and literals after "not"/"no"/"such as" must not. An expectation with no
  literal is judged *unsure*: it passes with a probability equal to its word overlap with the
  outputs, drawn from the sample seed, so ``judge.samples=k`` can disagree. It also verifies
  the transcript's "wrote PATH: N rows" claims, and flags unverifiable expectations.
* **comparator**: scores each side's rubric from its expectation pass rate and the share of
  expected files written, with a little seeded noise (so the two orders occasionally disagree).
* **analyzer**: attributes the win to instructions present in the winner's skill and missing
  from the loser's; **benchmark_analyzer** lists non-discriminating expectations and flaky evals.

Test hooks: a prompt containing ``[[sim:invalid-json]]`` is always answered with prose (never
JSON); ``[[sim:invalid-json-once]]`` only until the prompt is a re-ask.
"""
from __future__ import annotations

import json
import random
import re
from typing import Any

from skilleval.sim.completion import register_responder

_FILE = re.compile(r'<file path="([^"]+)">\n(.*?)\n</file>', re.S)
_LITERAL = re.compile(r"'([^']{2,})'|\"([^\"]{2,})\"|`([^`]{2,})`|([\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
                      r"|(\b\d{4}-\d{2}-\d{2}\b)|(\+?\b\d{4,}\b)")
_WORD = re.compile(r"[a-z][a-z0-9]{3,}")
_NEG = re.compile(r"(?:\bnot|\bno|such as|\bnever|\bwithout)\s*[\w\s,]{0,24}$", re.I)


def section(prompt: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", prompt, re.S)
    return m.group(1) if m else ""


def files_of(text: str) -> dict[str, str]:
    return dict(_FILE.findall(text))


def numbered(text: str) -> list[str]:
    return [re.sub(r"^\d+\.\s*", "", ln).strip() for ln in text.splitlines() if re.match(r"^\d+\.", ln)]


def judge_one(exp: str, corpus: str, rng: random.Random) -> tuple[bool, str, bool]:
    """(passed, evidence, unsure) for one expectation against the output text."""
    if not corpus.strip():
        return False, "no output files were written", False
    pos, neg = [], []
    for m in _LITERAL.finditer(exp):
        lit = next(g for g in m.groups() if g)
        (neg if _NEG.search(exp[:m.start()][-40:]) else pos).append(lit)
    if pos or neg:
        missing = [p for p in pos if p not in corpus]
        present_neg = [n for n in neg if n in corpus]
        if missing:
            return False, f"not found in the outputs: {missing[0]!r}", False
        if present_neg:
            return False, f"the outputs contain {present_neg[0]!r}", False
        shown = ", ".join(repr(p) for p in pos[:3]) or "none of " + ", ".join(repr(n) for n in neg[:2])
        return True, f"found in the outputs: {shown}", False
    words = set(_WORD.findall(exp.lower()))
    hits = {w for w in words if w in corpus.lower()}
    share = len(hits) / len(words) if words else 0.0
    passed = rng.random() < share
    return passed, (f"unsure: {len(hits)}/{len(words)} of the expectation's words appear in the "
                    f"outputs ({', '.join(sorted(hits)[:4])})"), True


def _is_reask(prompt: str) -> bool:
    return "previous reply could not be used" in prompt


def grader(prompt: str, seed: bytes) -> str:
    if "[[sim:invalid-json]]" in prompt or ("[[sim:invalid-json-once]]" in prompt and not _is_reask(prompt)):
        return "Looks good to me: every expectation seems to be met by the outputs."
    rng = random.Random(seed)
    exps = numbered(section(prompt, "expectations"))
    files = files_of(section(prompt, "outputs"))
    corpus = "\n".join(files.values())
    results, suggestions = [], []
    for e in exps:
        passed, evidence, unsure = judge_one(e, corpus, rng)
        results.append({"text": e, "passed": passed, "evidence": evidence})
        if unsure:
            suggestions.append({"assertion": e, "reason": "names no concrete value to check; a "
                                "wrong output could pass it"})
    claims = []
    for path, rows in re.findall(r"wrote (outputs/\S+): (\d+) rows", section(prompt, "transcript")):
        body = files.get(path)
        lines = [ln for ln in (body or "").splitlines() if ln.strip()]
        ok = body is not None and len(lines) - 1 == int(rows)
        claims.append({"claim": f"{path} has {rows} rows", "type": "factual", "verified": ok,
                       "evidence": f"{len(lines) - 1 if body else 0} data rows in the file"})
    return json.dumps({
        "expectations": results, "claims": claims,
        "user_notes_summary": {"uncertainties": [], "needs_review": [], "workarounds": []},
        "eval_feedback": {"suggestions": suggestions,
                          "overall": "No suggestions" if not suggestions else
                          f"{len(suggestions)} expectation(s) could be made checkable"},
    })


def _side(files: dict[str, str], exps: list[str], task: str, rng: random.Random) -> dict[str, Any]:
    corpus = "\n".join(files.values())
    details = [{"text": e, "passed": judge_one(e, corpus, rng)[0]} for e in exps]
    passed = sum(d["passed"] for d in details)
    rate = passed / len(details) if details else 0.0
    wanted = set(re.findall(r"\boutputs/[\w.\-/]*\w", task))
    have = {p if p.startswith("outputs/") else f"outputs/{p}" for p in files}
    complete = len(wanted & have) / len(wanted) if wanted else (1.0 if files else 0.0)

    def score(x: float) -> int:
        return max(1, min(5, round(1 + 4 * x + rng.uniform(-0.6, 0.6))))
    content = {"correctness": score(rate), "completeness": score(complete), "accuracy": score(rate)}
    structure = {"organization": score(complete), "formatting": score(0.8 if files else 0),
                 "usability": score((rate + complete) / 2)}
    cs, ss = sum(content.values()) / 3, sum(structure.values()) / 3
    strengths = [f"wrote {len(have & wanted)} of {len(wanted)} requested files"] if files else []
    weaknesses = [d["text"] for d in details if not d["passed"]][:3]
    return {"rubric": {"content": content, "structure": structure, "content_score": round(cs, 2),
                       "structure_score": round(ss, 2), "overall_score": round(cs + ss, 2)},
            "quality": {"score": max(1, min(10, round(cs + ss))), "strengths": strengths,
                        "weaknesses": weaknesses},
            "expect": {"passed": passed, "total": len(details), "pass_rate": round(rate, 4),
                       "details": details}}


def comparator(prompt: str, seed: bytes) -> str:
    rng = random.Random(seed)
    exps = [e for e in numbered(section(prompt, "expectations"))]
    task = section(prompt, "task")
    a = _side(files_of(section(prompt, "output_a")), exps, task, rng)
    b = _side(files_of(section(prompt, "output_b")), exps, task, rng)
    sa, sb = a["rubric"]["overall_score"], b["rubric"]["overall_score"]
    key_a, key_b = (sa, a["expect"]["pass_rate"]), (sb, b["expect"]["pass_rate"])
    winner = "A" if key_a > key_b else "B" if key_b > key_a else "TIE"
    out: dict[str, Any] = {
        "winner": winner,
        "reasoning": f"A scored {sa} and passed {a['expect']['passed']}/{a['expect']['total']}; "
                     f"B scored {sb} and passed {b['expect']['passed']}/{b['expect']['total']}.",
        "rubric": {"A": a["rubric"], "B": b["rubric"]},
        "output_quality": {"A": a["quality"], "B": b["quality"]},
    }
    if exps:
        out["expectation_results"] = {"A": a["expect"], "B": b["expect"]}
    return json.dumps(out)


def analyzer(prompt: str, seed: bytes) -> str:
    from skilleval.sim.agent.tidy import CARE_KEYWORDS

    comp = json.loads(section(prompt, "comparison") or "{}")
    winner = section(prompt, "winner").strip() or comp.get("winner", "A")
    loser = "B" if winner == "A" else "A"
    wm = re.search(r'<winner_skill name="([^"]*)">\n(.*?)\n</winner_skill>', prompt, re.S)
    lm = re.search(r'<loser_skill name="([^"]*)">\n(.*?)\n</loser_skill>', prompt, re.S)
    wname, wbody = (wm.group(1), wm.group(2)) if wm else ("?", "")
    lname, lbody = (lm.group(1), lm.group(2)) if lm else ("?", "")
    missing = [k for k in CARE_KEYWORDS.values() if k.lower() in wbody.lower()
               and k.lower() not in lbody.lower()]
    oq = comp.get("output_quality", {})
    wt, lt = section(prompt, "winner_transcript"), section(prompt, "loser_transcript")

    def following(body: str, transcript: str) -> dict[str, Any]:
        loaded = "Loaded skill" in transcript
        score = 8 if loaded else 3 if body and body != "(no skill)" else 5
        issues = [] if loaded else (["the skill was never loaded"] if body != "(no skill)" else
                                    ["no skill was available"])
        return {"score": score, "issues": issues}
    suggestions = [{"priority": "high" if i == 0 else "medium", "category": "instructions",
                    "suggestion": f"state the rule about {k!r} explicitly, as the winning skill does",
                    "expected_impact": "fewer failures on the step it governs"}
                   for i, k in enumerate(missing[:4])]
    if not suggestions:
        suggestions = [{"priority": "low", "category": "examples", "suggestion":
                        "add a worked example of the expected output", "expected_impact":
                        "more consistent output format"}]
    return json.dumps({
        "comparison_summary": {"winner": winner, "winner_skill": wname, "loser_skill": lname,
                               "comparator_reasoning": comp.get("reasoning", "")},
        "winner_strengths": oq.get(winner, {}).get("strengths", []) or ["passed more expectations"],
        "loser_weaknesses": oq.get(loser, {}).get("weaknesses", []) or ["passed fewer expectations"],
        "instruction_following": {"winner": following(wbody, wt), "loser": following(lbody, lt)},
        "improvement_suggestions": suggestions,
        "transcript_insights": {
            "winner_execution_pattern": " -> ".join(re.findall(r"Turn \d+: (\w+)", wt)) or "n/a",
            "loser_execution_pattern": " -> ".join(re.findall(r"Turn \d+: (\w+)", lt)) or "n/a"},
    })


def benchmark_analyzer(prompt: str, seed: bytes) -> str:
    data = json.loads(section(prompt, "benchmark") or "{}")
    by_exp: dict[tuple[str, str], dict[str, list[bool]]] = {}
    for run in data.get("runs", []):
        for e in run.get("expectations", []):
            if isinstance(e.get("passed"), bool):
                by_exp.setdefault((str(run.get("eval_name", run.get("eval_id"))), e["text"]), {}) \
                    .setdefault(run["configuration"], []).append(e["passed"])
    notes = []
    for (ev, text), cfgs in sorted(by_exp.items()):
        if len(cfgs) < 2:
            continue
        rates = {c: sum(v) / len(v) for c, v in cfgs.items()}
        if min(rates.values()) == 1.0:
            continue  # the deterministic notes already list non-discriminating expectations
        if max(rates.values()) == 0.0:
            notes.append(f"[{ev}] '{text}' fails in every run of every configuration")
        else:
            only = [c for c, r in rates.items() if r == 1.0 and all(
                rr == 0.0 for cc, rr in rates.items() if cc != c)]
            if only:
                notes.append(f"[{ev}] '{text}' passes only in {only[0]}")
    return json.dumps(notes[:12])


register_responder("grader", grader)
register_responder("comparator", comparator)
register_responder("analyzer", analyzer)
register_responder("benchmark_analyzer", benchmark_analyzer)
