"""Judges: the protocol, the deterministic typed checks, and combining repeated samples.

A judge is registered in the ``judge`` group (``register_judges``) and built from its params
dataclass. It grades expectations of one execution::

    class Judge(Protocol):
        name: str
        samples: int            # grade this many times (1 for deterministic judges)
        def identity(self) -> dict: ...          # part of every grade's cache key
        async def grade(self, item: JudgeInput) -> JudgeOutput: ...

Routing: a plain-string expectation goes to the configured judge (``judge=llm_grader`` by
default); a typed expectation ``{"type": NAME, ...}`` goes to the judge registered as NAME,
built with its default params, which reads its options from ``Expectation.spec``.

A verdict's ``passed`` is True, False, or None with ``error`` set: a judge error (the judge
could not produce a valid grade). A judge error is never counted as a pass or a fail.

``grade`` returns a `JudgeOutput` with one `Verdict` per expectation, in order. The runner
checks that (`checked_output`): a verdict missing, not a `Verdict`, or with a ``passed`` that is
not True/False/None is a judge error saying so; verdicts beyond the expectations are ignored.

A judge may declare ``deterministic = True`` (default False): it makes no model call, so it
still grades after a budget stop (the typed checks do).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, Sequence

import regex

from skilleval.execution import OutputFile, resolve_inside
from skilleval.functional.tasks import Expectation, TaskCase, json_path_steps


@dataclass
class JudgeInput:
    case: TaskCase
    expectations: tuple[Expectation, ...]
    workdir: Path  # the sandbox (outputs at their sandbox-relative paths)
    transcript: str
    outputs: tuple[OutputFile, ...]
    backend: Any = None  # for judges that ask a model (`await backend.complete(...)`)
    sample: int = 0


@dataclass
class Verdict:
    text: str
    passed: bool | None
    evidence: str
    error: str | None = None
    agreement: float = 1.0  # share of valid samples agreeing with the final verdict
    samples: int = 1
    disagreement: bool = False

    @property
    def status(self) -> str:
        return "judge_error" if self.passed is None else "pass" if self.passed else "fail"


@dataclass
class JudgeOutput:
    verdicts: list[Verdict]
    claims: list[dict[str, Any]] = field(default_factory=list)
    eval_feedback: dict[str, Any] | None = None
    user_notes_summary: dict[str, list[str]] | None = None
    calls: int = 0
    attempts: int = 0


class Judge(Protocol):
    name: str
    samples: int

    def identity(self) -> dict[str, Any]: ...

    async def grade(self, item: JudgeInput) -> JudgeOutput: ...


# -- deterministic typed checks ------------------------------------------------------------


def _read(item: JudgeInput, spec: dict[str, Any]) -> tuple[str | None, str]:
    path = spec.get("path")
    if not isinstance(path, str):
        return None, "check has no 'path'"
    try:
        p = resolve_inside(item.workdir, path)
    except PermissionError as exc:
        return None, str(exc)
    if not p.is_file():
        return None, f"{path} was not written"
    try:
        return p.read_text(encoding="utf-8"), ""
    except UnicodeDecodeError:
        return p.read_bytes().decode("utf-8", errors="replace"), ""


def json_path(doc: Any, query: str) -> Any:
    """A small JSONPath subset: ``$``, ``.key``, ``[index]``, ``['key']``. KeyError if absent."""
    cur = doc
    for step in json_path_steps(query):
        if isinstance(step, int):
            if not isinstance(cur, list) or step >= len(cur):
                raise KeyError(query)
        elif not isinstance(cur, dict) or step not in cur:
            raise KeyError(query)
        cur = cur[step]
    return cur


REGEX_TIMEOUT_S = 5.0


def regex_search(pattern: str, text: str, timeout_s: float = REGEX_TIMEOUT_S) -> "regex.Match[str] | None":
    """Python-compatible regex search under a time limit. Why the `regex` module: the stdlib
    engine cannot be interrupted, and ``^(a+)+$`` on a long line backtracks for hours."""
    return regex.search(pattern, text, regex.M | regex.VERSION0, timeout=timeout_s)


def check(item: JudgeInput, exp: Expectation) -> Verdict:
    spec = exp.spec or {}
    t = spec.get("type")
    if t == "file_exists":
        p = spec.get("path", "")
        try:
            f = resolve_inside(item.workdir, p)
        except PermissionError as exc:
            return Verdict(exp.text, False, str(exc))
        ok = f.is_file()
        return Verdict(exp.text, ok, f"{p} exists ({f.stat().st_size} bytes)" if ok else f"{p} was not written")
    text, why = _read(item, spec)
    if text is None:
        return Verdict(exp.text, False, why)
    if t == "contains":
        needle = str(spec.get("text", ""))
        i = text.find(needle)
        if i < 0:
            return Verdict(exp.text, False, f"{spec['path']} does not contain {needle!r}")
        line = text.count("\n", 0, i) + 1
        return Verdict(exp.text, True, f"{spec['path']} line {line} contains {needle!r}")
    if t == "regex":
        limit = min(float(spec.get("timeout_s") or REGEX_TIMEOUT_S), REGEX_TIMEOUT_S)
        try:
            m = regex_search(str(spec.get("pattern", "")), text, limit)
        except regex.error as exc:
            return Verdict(exp.text, None, "", error=f"invalid regex: {exc}")
        except TimeoutError:  # a catastrophic pattern: the check could not decide (an error)
            return Verdict(exp.text, None, "", error=f"regex gave no answer within {limit:g} s "
                                                     f"(catastrophic backtracking?): /{spec.get('pattern')}/")
        if not m:
            return Verdict(exp.text, False, f"no line of {spec['path']} matches /{spec.get('pattern')}/")
        return Verdict(exp.text, True, f"{spec['path']} line {text.count(chr(10), 0, m.start()) + 1}: "
                                       f"{m.group(0)[:200]!r}")
    if t == "json_path":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            return Verdict(exp.text, False, f"{spec['path']} is not valid JSON ({exc.msg})")
        try:
            got = json_path(doc, str(spec.get("query", "$")))
        except KeyError:
            return Verdict(exp.text, False, f"{spec['path']}: {spec.get('query')} not found")
        except ValueError as exc:
            return Verdict(exp.text, None, "", error=str(exc))
        want = spec.get("equals")
        ok = got == want if "equals" in spec else got is not None
        return Verdict(exp.text, ok, f"{spec['path']}: {spec.get('query')} = {json.dumps(got)}"
                                     + ("" if ok else f" (expected {json.dumps(want)})"))
    return Verdict(exp.text, None, "", error=f"no deterministic check named {t!r}")


class CheckJudge:
    """``file_exists`` / ``contains`` / ``regex`` / ``json_path``: deterministic, no model call."""

    samples = 1
    deterministic = True  # no model call: grades even after a budget stop

    def __init__(self, name: str) -> None:
        self.name = name

    def identity(self) -> dict[str, Any]:
        return {"judge": self.name, "version": 1}

    async def grade(self, item: JudgeInput) -> JudgeOutput:
        return JudgeOutput([check(item, e) for e in item.expectations])


# -- checking a judge's answer -----------------------------------------------------------------


def checked_output(judge: str, out: Any, exps: Sequence[Expectation]) -> tuple[JudgeOutput, int]:
    """`out` with exactly one valid verdict per expectation, and how many extra verdicts were
    dropped. A judge (a plugin's, say) that answers with the wrong type, too few verdicts or a
    ``passed`` that is not a bool gets judge errors for what it did not grade: zipping its
    verdicts with the expectations silently dropped the missing ones from the pass rate."""
    if not isinstance(out, JudgeOutput) or not isinstance(out.verdicts, (list, tuple)):
        what = type(out.verdicts if isinstance(out, JudgeOutput) else out).__name__
        why = (f"judge {judge} returned {what}, not a JudgeOutput with a list of verdicts"
               if not isinstance(out, JudgeOutput) else f"judge {judge} returned verdicts as {what}, not a list")
        return JudgeOutput([Verdict(e.text, None, "", error=why) for e in exps]), 0
    verdicts: list[Verdict] = []
    for i, e in enumerate(exps):
        v = out.verdicts[i] if i < len(out.verdicts) else None
        if v is None:
            why = f"judge {judge} returned {len(out.verdicts)} verdict(s) for {len(exps)} expectations"
        elif not isinstance(v, Verdict):
            why = f"judge {judge} returned a {type(v).__name__} as verdict {i + 1}, not a Verdict"
        elif v.passed is not None and not isinstance(v.passed, bool):
            why = (f"judge {judge} gave verdict {i + 1} passed={v.passed!r} "
                   f"({type(v.passed).__name__}); it must be True, False or None")
        else:
            verdicts.append(v)
            continue
        verdicts.append(Verdict(e.text, None, "", error=why))
    extra = max(0, len(out.verdicts) - len(exps))
    return replace(out, verdicts=verdicts), extra


# -- combining samples ------------------------------------------------------------------------


def combine(outputs: list[JudgeOutput]) -> JudgeOutput:
    """Majority verdict per expectation over k samples; ties fail (burden of proof on the
    expectation). Errored samples are ignored unless every sample errored (judge error)."""
    if len(outputs) == 1:
        return outputs[0]
    n = len(outputs[0].verdicts)
    verdicts = []
    for i in range(n):
        vs = [o.verdicts[i] for o in outputs]
        valid = [v for v in vs if v.passed is not None]
        if not valid:
            first = vs[0]
            verdicts.append(Verdict(first.text, None, "", error=first.error, agreement=0.0,
                                    samples=len(vs)))
            continue
        k = sum(1 for v in valid if v.passed)
        passed = k * 2 > len(valid)
        agree = (k if passed else len(valid) - k) / len(valid)
        rep = next(v for v in valid if v.passed == passed)
        verdicts.append(Verdict(rep.text, passed, rep.evidence, agreement=round(agree, 4),
                                samples=len(vs), disagreement=0 < k < len(valid)))
    base = outputs[0]
    return JudgeOutput(verdicts, base.claims, base.eval_feedback, base.user_notes_summary,
                       calls=sum(o.calls for o in outputs), attempts=sum(o.attempts for o in outputs))


def verdict_dict(v: Verdict) -> dict[str, Any]:
    return asdict(v)
