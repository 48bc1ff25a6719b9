"""``benchmark.json`` and ``benchmark.md`` in skill-creator's shape, with honest statistics.

Compatible with skill-creator's aggregator and viewer (reference §3.7): ``runs[].configuration``
and ``result.*``, ``run_summary.<config>.{pass_rate,time_seconds,tokens}.{mean,stddev,min,max}``
(pooled, sample stddev, 4 dp) and ``run_summary.delta`` strings (``%+.2f``/``%+.1f``/``%+.0f``).
Fixed (B11-B13): the delta is primary minus baseline by *role* and ``run_summary`` lists the
primary first (the viewer shows the first two keys); ``runs_per_configuration`` comes from the
data; ``eval_name`` is emitted; tokens are never characters.

Added, under new keys the viewer ignores: ``per_eval`` (means and within-eval stddev),
``delta_stats`` (the per-eval-weighted delta with a bootstrap interval clustered by eval and a
paired permutation-test p-value), ``skill_fired`` rates, ``judge`` reliability and ``arms``.
``notes`` holds non-discriminating expectations, flaky evals and the skill's time/token cost.

Errors are not results. An execution that errored or timed out has no grade, is not in
``runs`` (so nothing that averages ``runs`` counts it, skill-creator's viewer included) and
enters no statistic: it is listed in ``errored_runs`` and counted per arm in
``execution_errors``. An arm with fewer than ``min_valid`` valid executions of an eval is
*insufficient* there, and that eval leaves the paired delta, its interval and its p-value.

Two kinds of mean, each shown with its own delta: ``run_summary`` pools every valid run (what
skill-creator's aggregator computes from the workspace), while ``delta_stats`` and the
summaries we print weigh every paired eval the same, so ``primary_mean - baseline_mean`` is
exactly the delta its interval is about.
"""
from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Any

from skilleval.stats import bootstrap_ci_clustered, stratified_permutation_p
from skilleval.reporting.markdown import md as md_text

METRICS = ("pass_rate", "time_seconds", "tokens")
FLAKY_STDDEV = 0.25
VALID_STATUSES = ("ok", "turn_cap")


def is_valid(run: dict[str, Any]) -> bool:
    """A run entry whose execution produced an answer (imported runs carry no status)."""
    return run.get("status", "ok") in VALID_STATUSES


def _eval_of(run: dict[str, Any]) -> str:
    return str(run.get("eval_name", run["eval_id"]))


def stat(values: list[float]) -> dict[str, float | None]:
    """skill-creator's Stat. With no values every field is None, never 0: an arm with no
    valid run has no pass rate, and a 0 would read as "failed everything"."""
    if not values:
        return {"mean": None, "stddev": None, "min": None, "max": None}
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": round(statistics.fmean(values), 4), "stddev": round(sd, 4),
            "min": round(min(values), 4), "max": round(max(values), 4)}


def _by(runs: list[dict[str, Any]], metric: str) -> dict[str, dict[str, list[float]]]:
    """configuration -> eval -> values (runs with no gradable expectation are left out)."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        res = r["result"]
        v = res.get(metric)
        if metric == "pass_rate" and v is not None and res.get("total"):
            # from the counts: the stored pass_rate is rounded to 4 places, and the exact
            # permutation test then sees near-ties where the runs tie (p 0.2453 for 0.2500);
            # counts that do not give the stored rate (a hand-made file) leave the rate as is
            exact = (res.get("passed") or 0) / res["total"]
            v = exact if abs(exact - float(v)) < 1e-4 else v
        if v is not None:
            out[r["configuration"]][_eval_of(r)].append(float(v))
    return out


def build_benchmark(runs: list[dict[str, Any]], metadata: dict[str, Any], primary: str,
                    baseline: str, *, confidence: float = 0.95, n_boot: int = 2000, seed: int = 0,
                    min_valid: int = 1, extra_notes: list[str] | None = None) -> dict[str, Any]:
    """`runs`: every run entry, errored ones included (they are set apart here)."""
    errored = [r for r in runs if not is_valid(r)]
    runs = [r for r in runs if is_valid(r)]
    configs = [primary, baseline] + sorted({r["configuration"] for r in runs + errored} - {primary, baseline})
    summary: dict[str, Any] = {}
    for c in configs:
        cr = [r for r in runs if r["configuration"] == c]
        summary[c] = {m: stat([float(r["result"][m]) for r in cr if r["result"].get(m) is not None])
                      for m in METRICS}
    fmt = {"pass_rate": "{:+.2f}", "time_seconds": "{:+.1f}", "tokens": "{:+.0f}"}
    summary["delta"] = {m: "n/a" if summary[primary][m]["mean"] is None or summary[baseline][m]["mean"] is None
                        else fmt[m].format(summary[primary][m]["mean"] - summary[baseline][m]["mean"])
                        for m in METRICS}
    all_evals = sorted({_eval_of(r) for r in runs + errored}, key=_sort_key)
    n_valid = Counter((r["configuration"], _eval_of(r)) for r in runs)
    insufficient = {c: [e for e in all_evals if n_valid[(c, e)] < max(1, min_valid)] for c in configs}
    paired = [e for e in all_evals if e not in insufficient[primary] and e not in insufficient[baseline]]
    delta_stats: dict[str, Any] = {"primary": primary, "baseline": baseline, "confidence": confidence,
                                   "min_valid": min_valid, "paired_evals": paired,
                                   "method": "bootstrap over evals (clustered), runs resampled within "
                                             "eval; p from a permutation test of the arm labels "
                                             "stratified by eval (evals are the pairs); means weigh "
                                             "every paired eval the same"}
    in_pairs = [r for r in runs if _eval_of(r) in paired]
    for m in METRICS:
        by = _by(in_pairs, m)
        bp, bb = by.get(primary, {}), by.get(baseline, {})
        delta, low, high = bootstrap_ci_clustered(bp, bb, n_boot=n_boot, confidence=confidence, seed=seed)
        p_value = stratified_permutation_p(bp, bb, seed=seed)
        both = [e for e, v in bp.items() if v and bb.get(e)]
        delta_stats[m] = {"delta": _r(delta), "low": _r(low), "high": _r(high),
                          "p_value": _r(p_value) if p_value is not None else None,
                          "primary_mean": _r(_eval_mean(bp, both)), "baseline_mean": _r(_eval_mean(bb, both)),
                          "n_evals": len(both), "n_pairs": len(both)}
    per_eval = []
    for ev in all_evals:
        row: dict[str, Any] = {"eval_name": ev}
        for c in configs:
            vals = _by(runs, "pass_rate").get(c, {}).get(ev, [])
            errs = sum(1 for r in errored if r["configuration"] == c and _eval_of(r) == ev)
            row[c] = {"pass_rate": stat(vals), "runs": len(vals), "valid": n_valid[(c, ev)],
                      "errors": errs, "insufficient": ev in insufficient[c]}
        # No delta when an arm has no gradable run of this eval (not "minus 0").
        row["delta_pass_rate"] = (_r(row[primary]["pass_rate"]["mean"] - row[baseline]["pass_rate"]["mean"])
                                  if ev in paired and row[primary]["runs"] and row[baseline]["runs"] else None)
        per_eval.append(row)
    fired = {}
    for c in configs:
        fr = [r.get("skill_fired") for r in runs if r["configuration"] == c]
        known = [f for f in fr if f is not None]
        fired[c] = {"fired": sum(1 for f in known if f), "runs": len(known)} if known else None
    judge = {"judge_errors": sum(r["result"].get("judge_errors", 0) for r in runs),
             "disagreements": sum(1 for r in runs for e in r.get("expectations", []) if e.get("disagreement")),
             "graded": sum(len(r.get("expectations", [])) for r in runs)}
    execution_errors = {c: {"valid": sum(1 for r in runs if r["configuration"] == c),
                            **{k: sum(1 for r in errored if r["configuration"] == c and r.get("status") == k)
                               for k in ("error", "timeout")},
                            "insufficient_evals": insufficient[c]} for c in configs}
    bench = {
        "metadata": {**metadata, "runs_per_configuration": _runs_per_config(runs + errored),
                     "evals_run": sorted({r["eval_id"] for r in runs + errored}, key=_sort_key)},
        "runs": runs, "run_summary": summary, "per_eval": per_eval, "delta_stats": delta_stats,
        "skill_fired": fired, "judge": judge, "execution_errors": execution_errors,
        "errored_runs": errored, "notes": [],
    }
    bench["notes"] = notes(bench, primary, baseline) + list(extra_notes or [])
    return bench


def _eval_mean(by_eval: dict[str, list[float]], evals: list[str]) -> float | None:
    """Mean over `evals` of each eval's mean (every eval weighs the same)."""
    means = [statistics.fmean(by_eval[e]) for e in evals]
    return statistics.fmean(means) if means else None


def _fmt(x: float | None, fmt: str) -> str:
    return "n/a" if x is None else fmt.format(x)


def _r(x: float | None) -> float | None:
    return None if x is None or x != x else round(float(x), 4)


def _sort_key(v: Any) -> tuple[int, Any]:
    s = str(v)
    return (0, int(s)) if s.isdigit() else (1, s)


def _runs_per_config(runs: list[dict[str, Any]]) -> int:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for r in runs:
        counts[(r["configuration"], str(r["eval_id"]))] += 1
    return max(counts.values(), default=0)


def notes(bench: dict[str, Any], primary: str, baseline: str) -> list[str]:
    out: list[str] = []
    errs = bench["execution_errors"]
    if bench["errored_runs"]:
        per_arm = "; ".join(f"{c}: {e['error']} error(s), {e['timeout']} timeout(s)" for c, e in errs.items())
        out.append(f"{len(bench['errored_runs'])} execution(s) errored or timed out ({per_arm}); they "
                   "have no grade and are left out of every mean, delta, interval and p-value")
    for c in (primary, baseline):
        if errs[c]["insufficient_evals"]:
            out.append(f"{c} has fewer than {bench['delta_stats']['min_valid']} valid execution(s) of "
                       f"{', '.join(errs[c]['insufficient_evals'])}: insufficient, left out of the delta")
    per_exp: dict[tuple[str, str], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in bench["runs"]:
        for e in r.get("expectations", []):
            if isinstance(e.get("passed"), bool):
                per_exp[(str(r.get("eval_name", r["eval_id"])), e["text"])][r["configuration"]].append(e["passed"])
    always: dict[str, list[str]] = defaultdict(list)
    for (ev, text), by_cfg in per_exp.items():
        if {primary, baseline} <= set(by_cfg) and all(all(v) for v in by_cfg.values()):
            always[ev].append(text)
    for ev, texts in always.items():
        out.append(f"[{ev}] {len(texts)} expectation(s) pass in every run of every arm and do not "
                   "discriminate: " + "; ".join(texts))
    for row in bench["per_eval"]:
        for c in (primary, baseline):
            sd = row[c]["pass_rate"]["stddev"]
            if sd is not None and sd > FLAKY_STDDEV:
                out.append(f"[{row['eval_name']}] flaky in {c}: pass rate stddev {sd:.2f} across runs")
    ds = bench["delta_stats"]
    for m, unit in (("time_seconds", "s"), ("tokens", " tokens")):
        p, b = ds[m]["primary_mean"], ds[m]["baseline_mean"]
        if p is not None and b:
            out.append(f"cost of {primary} vs {baseline}: {m} {p - b:+.1f}{unit} per run "
                       f"({(p - b) / b * 100:+.0f}%, evals weighted equally)")
    f = bench["skill_fired"].get(primary)
    if f and f["fired"] < f["runs"]:
        out.append(f"the skill loaded in only {f['fired']}/{f['runs']} {primary} runs: runs where it "
                   "never loaded measure the model without it")
    j = bench["judge"]
    if j["judge_errors"]:
        out.append(f"{j['judge_errors']} expectation grade(s) are judge errors (excluded from pass rates)")
    if j["disagreements"]:
        out.append(f"{j['disagreements']} grade(s) had judge samples that disagreed")
    return out


def render_md(bench: dict[str, Any]) -> str:
    md = bench["metadata"]
    ds = bench["delta_stats"]
    p, b = ds["primary"], ds["baseline"]
    label = {c: c.replace("_", " ").title() for c in (p, b)}
    s = bench["run_summary"]
    errs = bench["execution_errors"]
    lines = [f"# Skill Benchmark: {md.get('skill_name', '')}", "",
             f"**Model**: {md.get('executor_model', '')}", f"**Date**: {md.get('timestamp', '')}",
             f"**Evals**: {', '.join(map(str, md.get('evals_run', [])))} "
             f"({md.get('runs_per_configuration', 0)} runs each per configuration)", "",
             "## Summary", "", f"| Metric | {label[p]} | {label[b]} | Delta |",
             "|--------|------------|---------------|-------|"]

    def row(name: str, m: str, fmt: str, unit: str = "") -> str:
        d = ds[m]
        if d["delta"] is None:
            return f"| {name} | n/a | n/a | n/a |"
        ci = "" if d["low"] is None else f" [{fmt.format(d['low'])}, {fmt.format(d['high'])}]"
        show = (lambda x: f"{x * 100:.0f}%") if m == "pass_rate" else (lambda x: f"{x:.1f}{unit}" if unit else f"{x:.0f}")
        return (f"| {name} | {show(d['primary_mean'])} | {show(d['baseline_mean'])} | "
                f"{fmt.format(d['delta'])}{unit}{ci} |")
    lines += [row("Pass Rate", "pass_rate", "{:+.2f}"), row("Time", "time_seconds", "{:+.1f}", "s"),
              row("Tokens", "tokens", "{:+.0f}")]
    lines.append(f"| Valid runs (errors, timeouts) | {errs[p]['valid']} ({errs[p]['error']}, {errs[p]['timeout']}) | "
                 f"{errs[b]['valid']} ({errs[b]['error']}, {errs[b]['timeout']}) | |")
    pv = ds["pass_rate"]["p_value"]
    def pr(st: dict[str, Any], n: int | None = None) -> str:
        if st["mean"] is None:
            return "n/a"
        if n == 1:  # one run has no spread: "± 0%" read as perfectly consistent
            return f"{st['mean'] * 100:.0f}% (1 run)"
        return f"{st['mean'] * 100:.0f}% ± {st['stddev'] * 100:.0f}%"
    lines += ["", f"Means and Delta ({p} minus {b}, by role) weigh each of the "
                  f"{ds['pass_rate']['n_evals']} evals both arms measured the same; the interval is "
                  f"about that same Delta: {int(ds['confidence'] * 100)}% bootstrap clustered by eval; "
                  f"permutation p (stratified by eval) = {'n/a' if pv is None else f'{pv:.3g}'}. "
                  "Errored and timed-out executions are in no number.", "",
              f"Pooled over all valid runs (skill-creator's `run_summary`): {p} "
              f"{pr(s[p]['pass_rate'], errs[p]['valid'])}, {b} {pr(s[b]['pass_rate'], errs[b]['valid'])}.",
              "", "## Per eval", "",
              f"| Eval | {label[p]} | {label[b]} | Delta |", "|------|------|------|------|"]

    def cell(row_: dict[str, Any], c: str) -> str:
        a = row_[c]
        err = f" ({a['errors']} errored or timed out)" if a.get("errors") else ""
        if a.get("insufficient"):
            return f"insufficient: {a.get('valid', 0)} valid{err}"
        return pr(a["pass_rate"], a.get("valid")) + err
    for r in bench["per_eval"]:
        lines.append(f"| {md_text(r['eval_name'])} | {cell(r, p)} | {cell(r, b)} | "
                     f"{_fmt(r['delta_pass_rate'], '{:+.2f}')} |")
    if bench.get("notes"):  # the analyzer's notes are model output: escaped like every name
        lines += ["", "## Notes", ""] + [f"- {md_text(n, 2000)}" for n in bench["notes"]]
    prev = bench.get("previous_feedback")
    if prev:
        lines += ["", f"## Feedback on {prev['iteration']} ({prev.get('status') or 'no status'})", "",
                  "What the reviewer wrote about the previous outputs (the viewer shows each beside "
                  "the new output of the same run):", ""]
        lines += [f"- {md_text(rid)}: {md_text(text, 2000)}" for rid, text in prev["reviews"].items()]
    return "\n".join(lines) + "\n"
