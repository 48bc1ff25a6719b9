"""The ``functional_eval`` experiment: executions per eval x arm x repeat, judges, benchmark.

``skilleval +experiment=functional_eval [skill=PATH] [backend=...] [functional.runs=3]
[functional.arms=[old_skill,with_skill] functional.old_skill=PATH] [judge=llm_grader judge.samples=3]``
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import OmegaConf
from rich.table import Table

from skilleval.errors import HarnessError, UserError
from skilleval.execution import FILE_TOOLS, ArmSettings, input_file
from skilleval.functional.analyzer_notes import benchmark_observations
from skilleval.functional.arms import Arm, build_arms, check_equal
from skilleval.functional.benchmark import build_benchmark, render_md
from skilleval.functional.runner import FunctionalRunner, RunRecord
from skilleval.functional.tasks import TaskCase, default_evals_path, load_evals
from skilleval.functional.previous_feedback import previous_feedback
from skilleval.functional.workspace import next_iteration, run_entry, write_workspace
from skilleval.terminal import safe

if TYPE_CHECKING:
    from skilleval.app import JobContext


@dataclass
class Setup:
    skill: Any
    cases: list[TaskCase]
    arms: list[Arm]
    runner: FunctionalRunner
    fcfg: dict[str, Any]
    evals_path: Path

    def arm(self, role: str) -> Arm:
        return next(a for a in self.arms if a.role == role)


def functional_cfg(job: "JobContext") -> dict[str, Any]:
    node = job.cfg.get("functional")
    if node is None:
        raise UserError("no functional settings: use +experiment=functional_eval (it loads functional/default)")
    return OmegaConf.to_container(node, resolve=True)  # type: ignore[return-value]


#: what functional.permissions may say: what every executor enforces
PERMISSIONS = ("sandbox-write",)


def prepare(job: "JobContext", arm_names: list[str] | None = None) -> Setup:
    from skilleval.skills import load_skill

    f = functional_cfg(job)
    skill = job.load_skill()
    evals_path = Path(f["evals"]).expanduser() if f.get("evals") else default_evals_path(skill.path)
    _, cases = load_evals(evals_path)
    if f.get("only"):
        wanted = {str(x) for x in f["only"]}
        cases = [c for c in cases if c.id in wanted or c.name in wanted]
        if not cases:
            raise UserError(f"functional.only={sorted(wanted)} matches no eval in {evals_path}")
    if int(f.get("runs", 3)) < 1:
        raise UserError(f"functional.runs must be at least 1, got {f.get('runs')}")
    if not 1 <= int(f.get("min_valid", 1)) <= int(f.get("runs", 3)):
        raise UserError(f"functional.min_valid must be between 1 and functional.runs "
                        f"({f.get('runs', 3)}), got {f.get('min_valid')}")
    permissions = str(f.get("permissions", "sandbox-write"))
    if permissions not in PERMISSIONS:  # it was stored and not enforced: a promise not kept
        raise UserError(f"functional.permissions={permissions!r}: the executors support "
                        f"{', '.join(PERMISSIONS)} only (the model edits files inside its sandbox "
                        "folder and nowhere else)")
    base = ArmSettings(model=job.backend.model, tools=tuple(f.get("tools") or FILE_TOOLS),
                       permissions=permissions,
                       system_prompt=str(f.get("system_prompt") or ""),
                       max_turns=int(f.get("max_turns", 20)), timeout_s=float(f.get("timeout_s", 600)))
    arms = build_arms(list(arm_names or f.get("arms") or ["with_skill", "without_skill"]), skill, base,
                      load_skill=load_skill, old_skill=f.get("old_skill"),
                      overrides=f.get("arm_overrides") or {}, primary=f.get("primary"),
                      baseline=f.get("baseline"))
    check_equal({a.name: a.settings.to_dict() for a in arms})
    main_judge = job.build("judge", job.cfg.get("judge") or {"name": "llm_grader"})
    typed: dict[str, Any] = {}

    def judge_for_type(name: str) -> Any:
        if name not in typed:
            typed[name] = job.registry.build("judge", {"name": name})
        return typed[name]
    root = skill.path if skill.path.is_dir() else skill.path.parent
    for c in cases:  # every input file, before any call (and before the backend's own check)
        for rel in c.files:
            input_file(root, rel, where=f"{evals_path}: eval id {c.id}")
    check_task = getattr(job.backend, "check_task", None)  # optional in the backend protocol
    for c in cases:  # fail before any call on a task this backend cannot do at all
        if check_task is not None:
            check_task(c.name, c.prompt, tuple(c.files))
    for c in cases:  # fail before any call on an unknown check type, saying where
        for j, e in enumerate(c.expectations):
            if e.spec is not None:
                try:
                    judge_for_type(e.type)
                except UserError as exc:
                    raise UserError(f"{evals_path}: eval id {c.id} expectation #{j}: {exc}") from None
    runner = FunctionalRunner(job, root, main_judge, judge_for_type,
                              concurrency=int(f.get("concurrency", 4)))
    return Setup(skill, cases, arms, runner, f, evals_path)


def audit_effective(records: list[RunRecord]) -> None:
    """The backend's own report of what each arm ran with must also be equal."""
    seen: dict[str, dict[str, Any]] = {}
    for r in records:
        eff = r.result.effective_settings if r.result else None
        if eff and r.arm.name not in seen:
            seen[r.arm.name] = eff
    if len(seen) > 1:
        check_equal(seen, when="as reported by the backend")


async def run_records(job: "JobContext", setup: Setup, arms: list[Arm], grade: bool = True,
                      all_failed_ok: bool = False) -> list[RunRecord]:
    """Execute (and grade) every eval x arm x run. With none usable, HarnessError unless
    ``all_failed_ok`` (functional_eval then exports and counts the errors before its exit 3)."""
    runs = int(setup.fcfg.get("runs", 3))
    plan = setup.runner.plan(setup.cases, arms, runs, job.output_dir / "sandboxes")
    with job.progress() as prog:
        await setup.runner.execute_all(plan, prog)
        audit_effective(plan)
        if not all_failed_ok and not any(r.result and r.result.ok for r in plan):
            errs = {r.result.error for r in plan if r.result and r.result.error}
            raise HarnessError(f"no execution produced output ({len(plan)} tried); errors: "
                               + "; ".join(sorted(e for e in errs if e)[:3]))
        if grade:
            await setup.runner.grade_all(plan, prog)
    return plan


def run_functional_eval(job: "JobContext") -> int:
    return job.run(functional_eval_async(job))


async def functional_eval_async(job: "JobContext") -> int:
    setup = job.prepared or prepare(job)  # check_inputs built it already
    records = await run_records(job, setup, setup.arms, all_failed_ok=True)
    if not any(r.result is not None for r in records):  # a budget stop before the first one
        raise HarnessError(f"no execution ran ({len(records)} planned)")
    primary, baseline = setup.arm("primary").name, setup.arm("baseline").name
    f = setup.fcfg
    metadata = {"skill_name": setup.skill.name, "skill_path": str(setup.skill.path),
                "executor_model": job.backend.model, "analyzer_model": job.backend.model,
                "timestamp": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "backend": job.backend.name, "run_id": job.run_id,
                "arms": {a.name: {"role": a.role, **a.settings.to_dict()} for a in setup.arms}}
    runs = [run_entry(r) for r in records if r.result is not None]
    bench = build_benchmark(runs, metadata, primary, baseline, confidence=float(f.get("confidence", 0.95)),
                            n_boot=int(f.get("bootstrap", 2000)), seed=int(job.cfg.get("seed", 0) or 0),
                            min_valid=int(f.get("min_valid", 1)))
    problem = measurement_problem(records, bench)
    if problem:
        bench["flags"] = [problem]
        bench["notes"].insert(0, f"NOT MEASURED: {problem}")
        job.summary["could_not_measure"] = problem  # the viewer says it above the numbers
    stopped = job.budget.stopped if job.budget is not None else None
    if stopped:
        mark_partial(bench, stopped, setup.runner.stats, len(records))
    if f.get("analyze", True) and not problem and not stopped:
        bench["notes"] += await benchmark_observations(job, setup.runner.model_backend, bench)
    ws = Path(f["workspace"]).expanduser() if f.get("workspace") else job.output_dir / "workspace"
    number = int(f.get("iteration") or next_iteration(ws))  # the iteration folder written below
    prev = previous_feedback(ws, number)
    if prev is not None:  # the reviews of the last outputs, beside the new numbers
        bench["previous_feedback"] = prev
    md = render_md(bench)
    if f.get("iteration"):
        from skilleval.functional.workspace import set_aside_feedback

        kept = set_aside_feedback(ws / f"iteration-{f.get('iteration')}", job.run_id)
        if kept is not None:
            job.console.print(f"[yellow]note: iteration-{f.get('iteration')} already had feedback on its "
                              f"earlier outputs; kept as {safe(kept.name)}, the new outputs start without "
                              "feedback[/yellow]")
    it = write_workspace(ws, records, bench, md, number)
    (job.output_dir / "benchmark.json").write_text(json.dumps(bench, indent=2, default=str), encoding="utf-8")
    (job.output_dir / "benchmark.md").write_text(md, encoding="utf-8")
    print_summary(job, bench, records, setup)
    job.report("functional_eval", bench)
    job.console.print(f"workspace: {safe(it)}\nbenchmark: {safe(it / 'benchmark.json')} and benchmark.md")
    if prev is not None:
        job.console.print(f"feedback on {safe(prev['iteration'])} ({safe(prev.get('status') or 'no status')}): "
                          f"{len(prev['reviews'])} run(s) commented; listed in benchmark.md, and shown "
                          "beside the new outputs in `skilleval view`")
    st = setup.runner.stats
    model = setup.runner.model_backend  # judge, re-ask and analyzer calls, with their cost
    job.summary.update({"calls_made": st["executions_run"] + getattr(model, "calls", st["judge_calls"]),
                        "calls_cached": st["executions_cached"] + st["grades_cached"],
                        "cost_usd": sum(r.result.cost_usd for r in records if r.result and not r.cached)
                        + getattr(model, "usd", 0.0),
                        "delta": bench["delta_stats"], "workspace": str(it), **st,
                        # per arm: valid, errored, timed out (the Runs page counts them)
                        "execution_errors": bench.get("execution_errors") or {}})
    pr = bench["delta_stats"]["pass_rate"]
    ds = bench["delta_stats"]
    short = sorted({e for v in (bench.get("execution_errors") or {}).values() if isinstance(v, dict)
                    for e in v.get("insufficient_evals") or []})
    job.summary["gate_metrics"] = {"delta": {
        "value": pr["delta"], "low": pr["low"], "high": pr["high"], "why": "no eval graded in both arms",
        # the delta is over the evals graded in both arms: said in the gate's line
        "note": f"over {len(ds.get('paired_evals') or [])} paired eval(s)" + (
            f"; {len(short)} insufficient (too few valid executions) not counted" if short else "")}}
    if problem:
        raise HarnessError(problem)
    graded = [v for r in records for v in r.verdicts]
    if graded and all(v.passed is None for v in graded):
        raise HarnessError("every grade is a judge error: the judge could not produce valid grades")
    return 0


def mark_partial(bench: dict[str, Any], stopped: str, stats: dict[str, int], planned: int) -> None:
    """A budget stop: every number covers only the executions that ran (and were graded)."""
    not_run, ungraded = stats["executions_not_run"], stats["grades_not_made"]
    bench["partial"] = {"reason": f"budget stop: {stopped}", "executions_planned": planned,
                        "executions_not_run": not_run, "grades_not_made": ungraded}
    bench["notes"].insert(0, f"PARTIAL: budget stop ({stopped}): {not_run} of {planned} executions "
                             f"not run, {ungraded} expectation grade(s) not made (counted as judge "
                             "errors, never as failures); every number covers only what ran")


def measurement_problem(records: list[RunRecord], bench: dict[str, Any]) -> str | None:
    """Why this run measured nothing (exit 3 after the workspace is written), or None.

    * no eval has enough valid executions in both arms: errors are not results, so there is
      no comparison to report;
    * no execution in any arm wrote a file: a task that produces nothing cannot be graded
      on its outputs, and a harness that lost them must not pass for a skill that failed;
    * no eval has a pass rate in both arms (no expectation, or none graded): the run paid
      for executions and has no pass rate to compare (it printed n/a and exited 0).
    """
    ds = bench["delta_stats"]
    if not ds["paired_evals"]:
        errs = bench["execution_errors"]
        counts = ", ".join(f"{a}: {e['valid']} valid, {e['error']} errored, {e['timeout']} timed out"
                           for a, e in errs.items())
        reasons = sorted({str(r.result.error) for r in records if r.result and not r.valid and r.result.error})
        return (f"no eval has {ds['min_valid']}+ valid execution(s) in both arms ({counts})"
                + (f"; errors: {'; '.join(reasons[:3])}" if reasons else ""))
    valid = [r for r in records if r.valid]
    if valid and not any(r.result.outputs for r in valid):
        return (f"no arm wrote any output file ({len(valid)} valid executions, 0 files): the "
                "executor produced nothing to grade")
    if ds["pass_rate"]["n_evals"] == 0:  # e.g. every eval's expectations list is empty
        graded = sum(1 for r in valid for v in r.verdicts if v.passed is not None)
        return (f"no pass rate in both arms of any eval ({graded} expectation(s) graded): add "
                "expectations to the evals (the outputs are in the workspace to look at)")
    return None


def print_summary(job: "JobContext", bench: dict[str, Any], records: list[RunRecord], setup: Setup) -> None:
    ds = bench["delta_stats"]
    p, b = ds["primary"], ds["baseline"]
    t = Table(title=f"functional eval: {safe(setup.skill.name)} ({len(setup.cases)} evals x "
                    f"{bench['metadata']['runs_per_configuration']} runs, backend {safe(job.backend.name)})")
    t.add_column("metric")
    t.add_column(f"{p} (primary)", justify="right")
    t.add_column(f"{b} (baseline)", justify="right")
    t.add_column(f"delta [{int(ds['confidence'] * 100)}% CI]", justify="right")
    paired = ds["pass_rate"].get("n_evals")
    if paired is not None and paired < len(setup.cases):  # the counts below are over every eval
        t.caption = (f"pass rate, time and tokens: means over the {paired} of {len(setup.cases)} evals "
                     "measured in both arms; valid executions and errors: every eval")

    def d(m: str, fmt: str) -> str:
        x = ds[m]
        if x["delta"] is None:
            return "n/a"
        if x["low"] is None:  # too few runs for any interval at this confidence (stats)
            return f"{fmt.format(x['delta'])} (CI n/a: too few runs)"
        return f"{fmt.format(x['delta'])} [{fmt.format(x['low'])}, {fmt.format(x['high'])}]"

    def mean(m: str, arm: str, fmt: str) -> str:
        x = ds[m][f"{arm}_mean"]
        return "n/a" if x is None else fmt.format(x)
    # Means weigh every paired eval the same, so primary - baseline is the delta shown.
    t.add_row("pass rate", mean("pass_rate", "primary", "{:.0%}"), mean("pass_rate", "baseline", "{:.0%}"),
              d("pass_rate", "{:+.2f}"))
    t.add_row("time (s)", mean("time_seconds", "primary", "{:.1f}"), mean("time_seconds", "baseline", "{:.1f}"),
              d("time_seconds", "{:+.1f}"))
    t.add_row("tokens", mean("tokens", "primary", "{:.0f}"), mean("tokens", "baseline", "{:.0f}"),
              d("tokens", "{:+.0f}"))
    ee = bench["execution_errors"]
    t.add_row("valid executions", str(ee[p]["valid"]), str(ee[b]["valid"]), "")
    t.add_row("errored / timed out", f"{ee[p]['error']} / {ee[p]['timeout']}",
              f"{ee[b]['error']} / {ee[b]['timeout']}", "")
    fired = bench["skill_fired"]
    fmt_f = lambda x: "-" if not x else f"{x['fired']}/{x['runs']}"  # noqa: E731
    t.add_row("skill loaded", fmt_f(fired.get(p)), fmt_f(fired.get(b)), "")
    errs = {a: sum(r.counts[2] for r in records if r.arm.name == a) for a in (p, b)}
    t.add_row("judge errors", str(errs[p]), str(errs[b]), "")
    job.out.print(t)
    partial = bench.get("partial")
    if partial:  # on stdout beside the numbers, as trigger_eval says it (stderr alone was missed)
        job.out.print(f"[yellow]PARTIAL: {safe(partial['reason'])}: {partial['executions_not_run']} "
                      f"executions not run and {partial['grades_not_made']} grade(s) not made (the "
                      "judge errors above); every number covers only what ran[/yellow]")
    pv = ds["pass_rate"]["p_value"]
    dv = ds["pass_rate"]["delta"]
    job.out.print(f"pass-rate delta ({p} - {b}): {'n/a' if dv is None else f'{dv:+.2f}'}, permutation "
                  f"p = {'n/a' if pv is None else f'{pv:.3g}'} (arm labels shuffled within each of "
                  f"{ds['pass_rate']['n_evals']} evals)")
    pe = Table(title="per eval (mean pass rate)")
    for col in ("eval", p, b, "delta"):
        pe.add_column(col, justify="left" if col == "eval" else "right")
    def cell(row: dict[str, Any], arm: str) -> str:
        a = row[arm]
        err = f" ({a['errors']} errored or timed out)" if a["errors"] else ""
        if a["insufficient"]:
            return f"insufficient{err}"
        return ("n/a" if not a["runs"] else f"{a['pass_rate']['mean']:.0%}") + err
    for row in bench["per_eval"]:
        pe.add_row(safe(row["eval_name"]), cell(row, p), cell(row, b),
                   "n/a" if row["delta_pass_rate"] is None else f"{row['delta_pass_rate']:+.2f}")
    job.out.print(pe)
    st = setup.runner.stats
    job.console.print(f"executions: {st['executions_run']} run, {st['executions_cached']} from the store; "
                      f"grades: {st['grades_run']} graded, {st['grades_cached']} from the store")
    for n in bench["notes"][:8]:
        job.console.print(f"[dim]note:[/dim] {safe(n)}")
    if len(bench["notes"]) > 8:
        job.console.print(f"[dim]({len(bench['notes']) - 8} more notes in benchmark.md)[/dim]")


run_functional_eval.gate_metrics = ("delta",)  # type: ignore[attr-defined]
run_functional_eval.gate_baseline = True  # type: ignore[attr-defined]
run_functional_eval.reports = ("functional_eval",)  # type: ignore[attr-defined]
run_functional_eval.check_inputs = prepare  # evals, arms, input files, judges: before the run is stored  # type: ignore[attr-defined]
run_functional_eval.gate_confidence = "functional.confidence"  # type: ignore[attr-defined]


def functional_eval_factory(params: Any) -> Any:
    return run_functional_eval
