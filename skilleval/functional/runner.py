"""Runs a functional eval: executions (cached by key), then grades (cached by key).

Each eval x arm x repeat gets a fresh sandbox. An execution already in the store with the
same content-addressed key (and a usable status) is not run again: its outputs are restored
from the blob store into the sandbox instead, so grading, workspaces and comparisons see the
same files. Grades are cached the same way, per expectation; judge errors are retried by the
next run, never reused. Concurrency is one semaphore over backend calls.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilleval import sample_key
from skilleval.budget import call_bound, metered
from skilleval.errors import BudgetExhausted
from skilleval.execution import (ExecutionRequest, ExecutionResult, blob_path,
                                 execution_key, prepare_sandbox, resolve_inside,
                                 store_blobs)
from skilleval.functional.arms import Arm
from skilleval.functional.judges import JudgeInput, JudgeOutput, Verdict, checked_output, combine
from skilleval.functional.records import (digest, execution_from_row, execution_row, now,
                                          outcome_digest, rows_by_key)
from skilleval.functional.tasks import Expectation, TaskCase
from skilleval.terminal import safe

USABLE = "status IN ('ok', 'turn_cap')"


@dataclass
class RunRecord:
    case: TaskCase
    arm: Arm
    repeat: int
    request: ExecutionRequest
    result: ExecutionResult | None = None
    cached: bool = False
    verdicts: list[Verdict] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    eval_feedback: dict[str, Any] | None = None
    user_notes: dict[str, list[str]] | None = None
    grader_seconds: float = 0.0
    grades_cached: int = 0

    @property
    def valid(self) -> bool:
        """The execution ran to an answer (ok, or stopped at the turn cap). An execution that
        errored or timed out is a harness failure: it gets no grade and no statistic."""
        return self.result is not None and self.result.ok

    @property
    def counts(self) -> tuple[int, int, int]:
        """(passed, failed, judge errors)."""
        p = sum(1 for v in self.verdicts if v.passed is True)
        f = sum(1 for v in self.verdicts if v.passed is False)
        return p, f, len(self.verdicts) - p - f


@dataclass
class FunctionalRunner:
    job: Any  # JobContext
    skill_root: Path
    main_judge: Any
    judge_for_type: Any  # callable(type name) -> judge
    concurrency: int = 4
    stats: dict[str, int] = field(default_factory=lambda: {
        "executions_run": 0, "executions_cached": 0, "grades_run": 0, "grades_cached": 0,
        "judge_calls": 0, "executions_not_run": 0, "grades_not_made": 0})

    def __post_init__(self) -> None:
        self._sem = asyncio.Semaphore(max(1, self.concurrency))
        store = self.job.store
        self.blobs = store.root / "blobs"
        self._exec_writer = store.writer("executions", self.job.experiment, self.job.run_id)
        self._grade_writer = store.writer("grades", self.job.experiment, self.job.run_id)
        self._stored_grades: dict[str, dict[str, Any]] | None = None  # grade_all's one read
        self._warned: set[str] = set()  # judges whose extra verdicts were said already
        # judges, the comparator and the analyzer ask the model through this: every call they
        # make (re-asks too) is booked against the budget and its cost counted
        self.model_backend = metered(self.job.backend, self.job.budget)

    # -- planning ------------------------------------------------------------------------

    def plan(self, cases: list[TaskCase], arms: list[Arm], runs: int, sandbox_root: Path) -> list[RunRecord]:
        ident = self.job.backend.identity()
        executor = getattr(self.job.backend, "executor_version", None)  # optional (hookspecs)
        if executor is not None:  # what execute() shows the model changed: not the old answers
            ident = {**ident, "executor": executor}
        plan = []
        for case in cases:
            # The inputs' contents change the answer, so they are part of the key.
            fingerprint = {**case.fingerprint(), "file_sha256": [_file_hash(self.skill_root, f)
                                                                 for f in case.files]}
            for arm in arms:
                skills = (arm.skill,) if arm.skill else ()
                for r in range(runs):
                    key = execution_key(ident, arm.settings, [s.content_hash for s in skills],
                                        fingerprint, r)
                    sandbox = sandbox_root / case.dir_name / arm.name / f"run-{r + 1}"
                    req = ExecutionRequest(key, case.id, case.name, arm.name, r, case.prompt,
                                           sandbox.resolve(), arm.settings, skills,
                                           tuple(f.replace("\\", "/") for f in case.files))
                    plan.append(RunRecord(case, arm, r, req))
        return plan

    # -- executing -----------------------------------------------------------------------

    async def execute_all(self, plan: list[RunRecord], progress: Any = None) -> None:
        cached = rows_by_key(self.job.store.lookup("executions", "key", [p.request.key for p in plan],
                                                   where=USABLE))
        task = progress.add_task("executions", total=len(plan)) if progress else None

        async def one(rec: RunRecord) -> None:
            row = cached.get(rec.request.key)
            if row is not None and self._restore(rec, row):
                rec.cached = True
                self.stats["executions_cached"] += 1
            else:
                try:
                    await self._execute(rec)
                except BudgetExhausted:
                    # Not run (rec.result stays None): the calls in flight still finish and
                    # are kept, and the job reports what ran as partial (exit 4).
                    self.stats["executions_not_run"] += 1
            if progress:
                progress.advance(task)
        await asyncio.gather(*(one(r) for r in plan))
        self._exec_writer.flush()

    def _restore(self, rec: RunRecord, row: dict[str, Any]) -> bool:
        res = execution_from_row(row)
        if any(not blob_path(self.blobs, o.sha256).is_file() for o in res.outputs):
            return False  # blobs were pruned: run it again
        prepare_sandbox(rec.request.sandbox, self.skill_root, list(rec.case.files))
        for o in res.outputs:
            dst = resolve_inside(rec.request.sandbox, o.path)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(blob_path(self.blobs, o.sha256), dst)
        rec.result = res
        return True

    async def _execute(self, rec: RunRecord) -> None:
        req = rec.request
        prepare_sandbox(req.sandbox, self.skill_root, list(rec.case.files))
        async with self._sem:
            if self.job.budget is not None:
                await self.job.budget.areserve()
            started = time.perf_counter()
            try:
                res = await asyncio.wait_for(self.job.backend.execute(req),
                                             timeout=req.timeout_s + 30)
            except BudgetExhausted:
                raise
            except asyncio.TimeoutError:
                res = ExecutionResult(req.key, status="timeout", error="executor timed out",
                                      duration_s=time.perf_counter() - started)
            except Exception as exc:  # noqa: BLE001 - an executor failure is an outcome
                if type(exc).__name__ in ("UserError",):
                    raise
                res = ExecutionResult(req.key, status="error", error=f"{type(exc).__name__}: {exc}",
                                      duration_s=time.perf_counter() - started)
        if self.job.budget is not None:  # settles the reservation, free calls too
            self.job.budget.charge_usd(res.cost_usd, bound_usd=call_bound(
                self.job.backend, res.input_tokens, res.output_tokens))
        store_blobs(req.sandbox, res.outputs, self.blobs)
        rec.result = res
        self.stats["executions_run"] += 1
        self._exec_writer.write([execution_row(self.job.identity_row(), res, **self._meta(rec))])

    def _meta(self, rec: RunRecord) -> dict[str, Any]:
        skill = rec.arm.skill
        return {"backend": self.job.backend.name, "model": rec.arm.settings.model,
                "skill": skill.name if skill else None, "skill_hash": skill.content_hash if skill else None,
                "arm": rec.arm.name, "role": rec.arm.role, "eval_id": rec.case.id,
                "eval_name": rec.case.name, "repeat": rec.repeat, "prompt": rec.case.prompt,
                "settings_json": json.dumps(rec.arm.settings.to_dict(), sort_keys=True),
                "source": "skilleval"}

    # -- grading -------------------------------------------------------------------------

    def _groups(self, case: TaskCase) -> list[tuple[Any, list[tuple[int, Expectation]]]]:
        # by judge instance, not name: the configured judge (judge.* params) and the same
        # judge built with its defaults for a typed expectation share a name, and grouping by
        # it graded both kinds with whichever came first
        groups: dict[int, tuple[Any, list[tuple[int, Expectation]]]] = {}
        for i, e in enumerate(case.expectations):
            judge = self.main_judge if e.spec is None else self.judge_for_type(e.type)
            groups.setdefault(id(judge), (judge, []))[1].append((i, e))
        return list(groups.values())

    async def grade_all(self, plan: list[RunRecord], progress: Any = None) -> None:
        task = progress.add_task("grading", total=len(plan)) if progress else None
        # The stored grades of the whole plan in one store read: a read opens a DuckDB
        # connection with a view per table (~0.1 s), and one per record and judge was most of
        # a resumed run's time. Nothing this run writes is a grade another record looks up
        # (a grade's key holds its execution's key).
        self._stored_grades = self._lookup_grades(
            [k for rec in plan if rec.valid for judge, items in self._groups(rec.case)
             for k in self._grade_keys(rec, judge, items)])

        async def one(rec: RunRecord) -> None:
            await self.grade(rec)
            if progress:
                progress.advance(task)
        try:
            await asyncio.gather(*(one(r) for r in plan))
        finally:
            self._stored_grades = None
        self._grade_writer.flush()

    def _grade_keys(self, rec: RunRecord, judge: Any, items: list[tuple[int, Expectation]]) -> list[str]:
        res = rec.result
        return [digest("grade", res.key, outcome_digest(res), judge.identity(), judge.samples,
                       e.fingerprint()) for _, e in items]

    def _lookup_grades(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        return rows_by_key(self.job.store.lookup("grades", "key", keys, where="status <> 'judge_error'"))

    async def grade(self, rec: RunRecord) -> None:
        if not rec.valid:
            rec.verdicts = []  # an error is never a failed expectation: nothing to grade
            return
        verdicts: dict[int, Verdict] = {}
        stored = self._stored_grades  # grade_all's read, if it made one
        for judge, items in self._groups(rec.case):
            keys = self._grade_keys(rec, judge, items)
            found = stored if stored is not None else self._lookup_grades(keys)
            if all(k in found for k in keys):
                for (i, _), k in zip(items, keys):
                    r = found[k]
                    verdicts[i] = Verdict(r["expectation"], r["passed"], r["evidence"] or "",
                                          agreement=r["agreement"], samples=r["samples"],
                                          disagreement=bool(r["disagreement"]))
                    if r.get("claims_json"):
                        rec.claims = json.loads(r["claims_json"])
                    if r.get("eval_feedback_json"):
                        rec.eval_feedback = json.loads(r["eval_feedback_json"])
                    if r.get("user_notes_json"):
                        rec.user_notes = json.loads(r["user_notes_json"])
                rec.grades_cached += len(items)
                self.stats["grades_cached"] += len(items)
                continue
            try:
                out, seconds = await self._judge(judge, rec, tuple(e for _, e in items))
            except BudgetExhausted as exc:
                # Not graded, so neither a pass nor a fail: a judge error that says why, and
                # not stored (a later run with budget left grades it).
                why = f"not graded: budget stop ({self.job.budget.stopped if self.job.budget else exc})"
                for i, e in items:
                    verdicts[i] = Verdict(e.text, None, "", error=why)
                self.stats["grades_not_made"] += len(items)
                continue
            rec.grader_seconds += seconds
            self.stats["grades_run"] += len(items)
            self.stats["judge_calls"] += out.calls
            if out.claims:
                rec.claims = out.claims
            if out.eval_feedback:
                rec.eval_feedback = out.eval_feedback
            if out.user_notes_summary:
                rec.user_notes = out.user_notes_summary
            rows = []
            for (i, e), k, v in zip(items, keys, out.verdicts):
                verdicts[i] = v
                rows.append(self._grade_row(rec, judge, i, e, k, v, out, seconds))
            self._grade_writer.write(rows)
        rec.verdicts = [verdicts[i] for i in sorted(verdicts)]

    async def _judge(self, judge: Any, rec: RunRecord, exps: tuple[Expectation, ...]) -> tuple[JudgeOutput, float]:
        started = time.perf_counter()

        async def sample(k: int) -> JudgeOutput:
            item = JudgeInput(rec.case, exps, rec.request.sandbox, rec.result.transcript,
                              rec.result.outputs, self.model_backend, k)
            async with self._sem:
                budget = self.job.budget
                if budget is not None and budget.stopped and not _deterministic(judge):
                    raise BudgetExhausted(budget.stopped)  # no call would be allowed
                try:
                    # keyed: a simulator gives this grade the same sample on every run, whatever
                    # order grades arrive in (identical outputs make identical grader prompts)
                    with sample_key.keyed(f"grade|{rec.request.run_label}|{judge.name}|{k}"):
                        out, extra = checked_output(judge.name, await judge.grade(item), exps)
                except BudgetExhausted:
                    raise
                except Exception as exc:  # noqa: BLE001 - a crashing judge is a judge error
                    msg = f"judge {judge.name} failed: {type(exc).__name__}: {exc}"
                    return JudgeOutput([Verdict(e.text, None, "", error=msg) for e in exps])
            if extra:
                self._extra_verdicts(judge.name, extra, len(exps))
            return out
        outs = await asyncio.gather(*(sample(k) for k in range(max(1, judge.samples))))
        return combine(list(outs)), time.perf_counter() - started

    def _extra_verdicts(self, judge: str, extra: int, expected: int) -> None:
        """Said once per judge and run: the extra verdicts are ignored, not graded."""
        if judge in self._warned:
            return
        self._warned.add(judge)
        line = (f"warning: judge {judge} returned {extra} more verdict(s) than the {expected} "
                "expectation(s) it was given; the extra ones are ignored")
        console = getattr(self.job, "console", None)
        if console is not None:
            console.print(f"[yellow]{safe(line)}[/yellow]")
        else:
            print(f"skilleval: {line}", file=sys.stderr)

    def _grade_row(self, rec: RunRecord, judge: Any, i: int, e: Expectation, key: str, v: Verdict,
                   out: JudgeOutput, seconds: float) -> dict[str, Any]:
        return {**self.job.identity_row(), "ts": now(), "key": key, "execution_key": rec.request.key,
                "judge": judge.name, "skill": rec.arm.skill.name if rec.arm.skill else None,
                "arm": rec.arm.name, "role": rec.arm.role, "eval_id": rec.case.id,
                "eval_name": rec.case.name, "repeat": rec.repeat, "expectation_index": i,
                "expectation": e.text, "spec_json": json.dumps(e.spec) if e.spec else None,
                "status": v.status, "passed": v.passed, "evidence": v.evidence,
                "judge_error": v.error, "samples": v.samples, "agreement": v.agreement,
                "disagreement": v.disagreement, "claims_json": json.dumps(out.claims),
                "eval_feedback_json": json.dumps(out.eval_feedback) if out.eval_feedback else None,
                "user_notes_json": json.dumps(out.user_notes_summary) if out.user_notes_summary else None,
                "judge_calls": out.calls, "grader_seconds": seconds, "source": "skilleval"}


def _file_hash(root: Path, rel: str) -> str | None:
    try:
        p = resolve_inside(root, rel)
    except PermissionError:
        return None  # prepare_sandbox reports it
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def _deterministic(judge: Any) -> bool:
    """A judge's own ``deterministic`` attribute (see `skilleval.functional.judges`)."""
    return getattr(judge, "deterministic", False) is True
