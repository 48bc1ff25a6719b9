"""Gates: turn a finished run into a red or green check (exit 1 when one fails).

An experiment states which metrics it can be gated on with a ``gate_metrics`` attribute on
its callable (checked before any call, so a gate the experiment cannot honour is bad input,
exit 2) and leaves the measured estimates in ``job.summary["gate_metrics"]`` as
``{metric: {"value", "low", "high"}}``, optionally with ``k``/``n`` (the count behind a
proportion), ``unit`` (what ``n`` counts; default ``queries``), and ``label`` and ``means``
(its name and what it measures, when the metric's word alone would mislead: a routing run's
``accuracy`` is the share of its trials that fired the expected skill). The gate lines (label
and meaning), the sweep table and the viewer's Runs page (label) show these published figures. A baseline gate compares this run with an earlier one
through the same paired statistics as ``skilleval diff``.

Rules. ``on=point`` tests the estimate, ``on=lower`` the lower bound of its interval, against
the minimum. With ``baseline`` and ``max_regression`` (a fraction, 0.05 = 5 points), the
regression gate fails when ``on=point`` and the drop is larger than allowed *and* significant
(exact McNemar for trigger runs, the stratified permutation test for functional runs, at
1 − confidence), or when ``on=lower`` and the lower bound of the paired interval of the
delta lies below −max_regression (a larger drop cannot be ruled out).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skilleval.errors import HarnessError, UserError

if TYPE_CHECKING:
    from skilleval.app import JobContext

MINIMUMS = {"min_precision": "precision", "min_recall": "recall", "min_accuracy": "accuracy",
            "min_delta": "delta"}


@dataclass(frozen=True)
class GateResult:
    gate: str          # e.g. "gate.min_recall"
    metric: str
    measured: str
    required: str
    passed: bool
    #: False: the gate was asked for but had nothing to measure against (gate.baseline=latest
    #: on the first run); it blocks nothing, and every report says it was not checked
    checked: bool = True
    #: True: not checked because its figure could not be measured in this run (precision with
    #: no query triggered, an interval too few runs allow): the run exits 3 unless another
    #: gate failed outright. Each gate is judged alone: an undefined precision used to hide a
    #: recall gate that had measured 0/10 and failed.
    unmeasured: bool = False

    @property
    def line(self) -> str:
        if not self.checked:
            why = self.measured.removeprefix("not checked: ")
            return f"gate not checked: {self.metric}: {why} ({self.gate})"
        verdict = "passed" if self.passed else "FAILED"
        return f"gate {verdict}: {self.metric}: measured {self.measured}, required {self.required} ({self.gate})"


@dataclass(frozen=True)
class GateSettings:
    minimums: dict[str, float]
    on: str
    baseline: str | None
    max_regression: float | None
    confidence: float

    @property
    def active(self) -> bool:
        return bool(self.minimums) or self.baseline is not None


def settings(cfg: Any, confidence_key: str = "trigger.confidence") -> GateSettings:
    """`confidence_key`: the config key of the level the experiment's own intervals use
    (an experiment names it with a ``gate_confidence`` attribute), so the baseline test's
    alpha and interval match the figures the run prints."""
    from skilleval.checks import checked_number

    g = cfg.get("gate") or {}
    mins = {}
    for key in MINIMUMS:
        v = checked_number(f"gate.{key}", g.get(key), float, none=True)
        if v is not None:
            lo = -1.0 if key == "min_delta" else 0.0
            if not lo <= v <= 1:
                raise UserError(f"gate.{key} must be in [{lo:g}, 1] (a fraction), got {v}")
            mins[key] = v
    on = str(g.get("on", "point"))
    if on not in ("point", "lower"):
        raise UserError(f"gate.on must be point or lower, got {on!r}")
    baseline = g.get("baseline")
    max_reg = checked_number("gate.max_regression", g.get("max_regression"), float, none=True)
    if (baseline is None) != (max_reg is None):
        raise UserError("gate.baseline and gate.max_regression go together: set both or neither")
    if max_reg is not None and not 0 <= max_reg <= 1:
        raise UserError(f"gate.max_regression must be in [0, 1] (a fraction), got {max_reg}")
    section, _, key = confidence_key.partition(".")  # a DictConfig or a plain dict alike
    conf = float((cfg.get(section) or {}).get(key, 0.95) or 0.95)
    return GateSettings(mins, on, None if baseline is None else str(baseline), max_reg, conf)


def check_supported(cfg: Any, experiment: Any, name: str, store: Any = None) -> GateSettings:
    """Before any call: every gate set must be one the experiment measures, and a baseline
    other than ``latest`` must exist in `store` (a typo found after the paid run is too late)."""
    s = settings(cfg, getattr(experiment, "gate_confidence", "trigger.confidence"))
    offered = set(getattr(experiment, "gate_metrics", ()))
    for key in s.minimums:
        if MINIMUMS[key] not in offered:
            raise UserError(f"gate.{key} does not apply to experiment {name} (it can be gated on: "
                            f"{', '.join('gate.min_' + m for m in sorted(offered)) or 'nothing'})")
    if s.baseline is not None and not getattr(experiment, "gate_baseline", False):
        raise UserError(f"gate.baseline does not apply to experiment {name}")
    if s.baseline not in (None, "latest") and store is not None:
        _check_baseline(cfg, s.baseline, store, name)
    return s


def _check_baseline(cfg: Any, baseline: str, store: Any, experiment: str) -> None:
    """Resolve `baseline` as the gate will (`_regression`), or exit 2 naming it. ``latest~N``
    is counted among the same skill's runs, so the skill's name is read here too; a skill
    that cannot load is left for the run to report."""
    from skilleval.rundiff.sources import load
    from skilleval.skills import load_skill

    skill = None
    if cfg.get("skill"):
        try:
            skill = load_skill(cfg.get("skill")).name
        except UserError:
            return
    try:
        load(baseline, store, experiment=experiment, skill=skill)
    except UserError as exc:
        raise UserError(f"gate.baseline={baseline}: {exc}") from None


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def evaluate(job: "JobContext", s: GateSettings) -> list[GateResult]:
    results: list[GateResult] = []
    measured: dict[str, dict[str, Any]] = job.summary.get("gate_metrics") or {}
    for key, minimum in s.minimums.items():
        metric = MINIMUMS[key]
        m = measured.get(metric)
        why = None
        if m is None or m.get("value") is None:
            why = (f"{metric} could not be measured in this run "
                   f"(undefined: {m.get('why', 'no data') if m else 'not reported'})")
        elif s.on == "lower" and m.get("low") is None:
            why = (f"the interval of {metric} could not be measured in this run (too few valid "
                   "runs for an interval at this confidence), so gate.on=lower cannot be checked")
        if why is not None:
            results.append(_unmeasured(f"gate.{key}", metric, why, f">= {minimum:g}"))
            continue
        x = m["value"] if s.on == "point" else m["low"]
        interval = f" [{_fmt(m.get('low'))}, {_fmt(m.get('high'))}]" if m.get("low") is not None else ""
        if m.get("n"):  # the count behind a proportion: 0.667 reads differently as 2/3
            interval += f" ({m['k']}/{m['n']} {m.get('unit', 'queries')}"
            if m.get("without_verdict"):  # measured on fewer queries than the eval set has
                interval += f"; {m['without_verdict']} without a verdict (too few valid runs) not counted"
            interval += ")"
        if m.get("note"):  # e.g. a functional delta: over how many evals, and how many left out
            interval += f" ({m['note']})"
        said = m.get("label") or metric  # what the number is, when the word alone would mislead
        if m.get("means"):
            said += f" ({m['means']})"
        results.append(GateResult(f"gate.{key}", said if s.on == "point" else f"{said} (lower bound)",
                                  f"{_fmt(x)}" + (f" (estimate {_fmt(m['value'])}{interval})" if s.on == "lower"
                                                  else interval),
                                  f">= {minimum:g}", x >= minimum - 1e-12))
    if s.baseline is not None:
        try:
            r = _regression(job, s)
        except HarnessError as exc:  # nothing in common, or no interval: this gate alone
            r = _unmeasured("gate.max_regression", "change vs baseline", str(exc),
                            f">= {-float(s.max_regression or 0):+.3f}")
        if r is not None:
            results.append(r)
    return results


def _unmeasured(gate: str, metric: str, why: str, required: str) -> GateResult:
    return GateResult(gate, metric, f"not checked: {why}", required, True, checked=False, unmeasured=True)


def _regression(job: "JobContext", s: GateSettings) -> GateResult | None:
    from skilleval.rundiff.compare import diff
    from skilleval.rundiff.sources import Like, from_file, load

    job.store.close()  # this run's rows must be readable
    skill = job.load_skill().name if job.cfg.get("skill") else None
    mine = frozenset(r["query"] for r in job.store.query(
        "SELECT query FROM queries WHERE run_id = ?", [job.run_id]).to_pylist()) \
        if "queries" in job.store.tables() else frozenset()
    try:
        base = load(s.baseline or "latest", job.store, exclude=job.run_id, experiment=job.experiment,
                    skill=skill, like=Like(job.backend.name, job.backend.model, mine))
    except UserError as exc:
        if s.baseline == "latest":  # the first run (e.g. main's first CI run) has no baseline
            return GateResult("gate.max_regression", "change vs baseline",
                              f"no earlier run to compare with ({exc})",
                              f">= {-float(s.max_regression or 0):+.3f}", True, checked=False)
        raise
    bench = job.output_dir / "benchmark.json"
    current = from_file(bench) if base.kind == "functional" and bench.is_file() else load(job.run_id, job.store)
    try:
        d = diff(base, current, common=True, confidence=s.confidence)
    except UserError as exc:  # found after the calls: nothing to compare is "could not measure"
        raise HarnessError(f"gate.baseline={s.baseline}: {exc} with baseline "
                           f"{base.run_id or base.label}; the regression gate cannot be checked "
                           "(a baseline must measure some of the same queries or evals)") from None
    for note in d["notes"]:
        job.console.print(f"[dim]gate.baseline: {note}[/dim]")
    alpha = 1 - s.confidence
    if d["kind"] == "trigger":
        delta, p = d["deltas"]["accuracy"], d["mcnemar"]["p_value"]
        metric, test = "accuracy change vs baseline", "exact McNemar"
    else:
        primary = (job.summary.get("delta") or {}).get("primary") or next(iter(d["arms"]))
        arm = d["arms"].get(primary) or next(iter(d["arms"].values()))
        delta, p = arm["pass_rate"], arm["pass_rate"]["p_value"]
        metric, test = f"{primary} pass-rate change vs baseline", "stratified permutation"
    if delta["delta"] is None:
        raise HarnessError("gate.baseline: no query or eval has a result in both runs; nothing to compare")
    limit = -float(s.max_regression) if s.max_regression else 0.0
    where = f"baseline {base.run_id or base.label}"
    if s.on == "lower" and delta["low"] is None:
        raise HarnessError("gate.baseline: the interval of the change could not be measured (too "
                           "few valid runs for an interval at this confidence), so "
                           "gate.on=lower cannot be checked")
    if s.on == "point":
        bad = delta["delta"] < limit - 1e-12 and p is not None and p < alpha
        ci = "n/a" if delta["low"] is None else f"{delta['low']:+.3f}, {delta['high']:+.3f}"
        measured = (f"{delta['delta']:+.3f} [{ci}], "
                    f"{test} p = {'n/a' if p is None else f'{p:.3g}'} ({where})")
        required = f">= {limit:+.3f} unless the drop is not significant (p >= {alpha:.2g})"
    else:
        bad = delta["low"] < limit - 1e-12
        measured = f"lower bound {delta['low']:+.3f} (estimate {delta['delta']:+.3f}; {where})"
        required = f">= {limit:+.3f}"
    return GateResult("gate.max_regression", metric, measured, required, not bad)


def estimates(summary_queries: dict[str, Any], results: Any = None) -> dict[str, dict[str, Any]]:
    """Gate metrics from Estimate objects or their dicts (precision, recall, accuracy).
    `results` (the per-query results, each with ``verdict`` and ``case.should_trigger``):
    how many queries each metric left out for want of a verdict, said in the gate's line."""
    short: dict[str, int] = {}
    if results is not None:
        none = [q for q in results if q.verdict == "insufficient"]
        short = {"accuracy": len(none), "precision": len(none),
                 "recall": sum(1 for q in none if q.case.should_trigger)}
    out = {}
    for name in ("precision", "recall", "accuracy"):
        e = summary_queries.get(name)
        if e is None:
            continue
        d = e.to_dict() if hasattr(e, "to_dict") else dict(e)
        if d.get("value") is None:
            d["why"] = {"precision": "no query triggered", "recall": "no should-trigger query"}.get(
                name, "no query with a verdict")
        if short.get(name):
            d["without_verdict"] = short[name]
        out[name] = d
    return out


def report_unchecked(job: "JobContext", s: GateSettings, why: str) -> None:
    """Every gate asked for, as not checked (junit: skipped; summary.md: 'not checked'), so a
    CI page does not read a run whose gates could not be checked as one without gates."""
    from dataclasses import asdict

    results = [GateResult(f"gate.{key}", MINIMUMS[key], f"not checked: {why}", f">= {minimum:g}", True,
                          checked=False) for key, minimum in s.minimums.items()]
    if s.baseline is not None:
        results.append(GateResult("gate.max_regression", "change vs baseline", f"not checked: {why}",
                                  f">= {-float(s.max_regression or 0):+.3f}", True, checked=False))
    job.summary["gates"] = [asdict(r) for r in results]
    job.report("gates", results)


def run_gates(job: "JobContext", s: GateSettings) -> int:
    """Evaluate the gates, report them (reporters get kind ``"gates"``), print one line per
    failed or unmeasurable gate on stderr; returns 1 if any failed, else 3 if one could not be
    measured, else 0."""
    import sys
    from dataclasses import asdict

    from rich.markup import escape

    if job.summary.get("partial"):
        # A budget-stopped run's rates are not the eval set's; gating them would be a guess.
        report_unchecked(job, s, "the run was stopped by the budget and its results are partial")
        print("skilleval: gates not checked: the run was stopped by the budget and its results "
              "are partial", file=sys.stderr)
        return 4
    results = evaluate(job, s)
    job.summary["gates"] = [asdict(r) for r in results]
    job.report("gates", results)
    for r in results:
        if r.unmeasured:
            print(f"skilleval: error: {r.gate}: {r.measured.removeprefix('not checked: ')}", file=sys.stderr)
        elif not r.checked:
            job.console.print(f"[yellow]{escape(r.line)}[/yellow]", soft_wrap=True)
        elif r.passed:
            job.out.print(r.line, markup=False, highlight=False, soft_wrap=True)
        else:
            print(f"skilleval: {r.line}", file=sys.stderr)
    if any(not r.passed for r in results):
        return 1  # a gate that measured and failed decides, whatever another could not check
    return HarnessError.exit_code if any(r.unmeasured for r in results) else 0
