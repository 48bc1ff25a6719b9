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
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from skilleval.stats import bootstrap_ci_clustered, stratified_permutation_p

METRICS = ("pass_rate", "time_seconds", "tokens")
FLAKY_STDDEV = 0.25


def stat(values: list[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": round(statistics.fmean(values), 4), "stddev": round(sd, 4),
            "min": round(min(values), 4), "max": round(max(values), 4)}


def _by(runs: list[dict[str, Any]], metric: str) -> dict[str, dict[str, list[float]]]:
    """configuration -> eval -> values (runs with no gradable expectation are left out)."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        v = r["result"].get(metric)
        if v is not None:
            out[r["configuration"]][str(r.get("eval_name", r["eval_id"]))].append(float(v))
    return out


def build_benchmark(runs: list[dict[str, Any]], metadata: dict[str, Any], primary: str,
                    baseline: str, *, confidence: float = 0.95, n_boot: int = 2000, seed: int = 0,
                    extra_notes: list[str] | None = None) -> dict[str, Any]:
    configs = [primary, baseline] + sorted({r["configuration"] for r in runs} - {primary, baseline})
    summary: dict[str, Any] = {}
    for c in configs:
        cr = [r for r in runs if r["configuration"] == c]
        summary[c] = {m: stat([float(r["result"][m]) for r in cr if r["result"].get(m) is not None])
                      for m in METRICS}
    d = {m: summary[primary][m]["mean"] - summary[baseline][m]["mean"] for m in METRICS}
    summary["delta"] = {"pass_rate": f"{d['pass_rate']:+.2f}", "time_seconds": f"{d['time_seconds']:+.1f}",
                        "tokens": f"{d['tokens']:+.0f}"}
    delta_stats: dict[str, Any] = {"primary": primary, "baseline": baseline, "confidence": confidence,
                                   "method": "bootstrap over evals (clustered), runs resampled within "
                                             "eval; p from a permutation test of the arm labels "
                                             "stratified by eval (evals are the pairs)"}
    for m in METRICS:
        by = _by(runs, m)
        delta, low, high = bootstrap_ci_clustered(by.get(primary, {}), by.get(baseline, {}),
                                                  n_boot=n_boot, confidence=confidence, seed=seed)
        p_value = stratified_permutation_p(by.get(primary, {}), by.get(baseline, {}), seed=seed)
        paired = [e for e, v in by.get(primary, {}).items() if v and by.get(baseline, {}).get(e)]
        delta_stats[m] = {"delta": _r(delta), "low": _r(low), "high": _r(high),
                          "p_value": _r(p_value) if p_value is not None else None,
                          "n_evals": len(paired),
                          "n_pairs": len(paired)}
    per_eval = []
    for ev in sorted({str(r.get("eval_name", r["eval_id"])) for r in runs}):
        row: dict[str, Any] = {"eval_name": ev}
        for c in configs:
            vals = _by(runs, "pass_rate").get(c, {}).get(ev, [])
            row[c] = {"pass_rate": stat(vals), "runs": len(vals)}
        # No delta when an arm has no gradable run of this eval (not "minus 0").
        row["delta_pass_rate"] = (_r(row[primary]["pass_rate"]["mean"] - row[baseline]["pass_rate"]["mean"])
                                  if row[primary]["runs"] and row[baseline]["runs"] else None)
        per_eval.append(row)
    fired = {}
    for c in configs:
        fr = [r.get("skill_fired") for r in runs if r["configuration"] == c]
        known = [f for f in fr if f is not None]
        fired[c] = {"fired": sum(1 for f in known if f), "runs": len(known)} if known else None
    judge = {"judge_errors": sum(r["result"].get("judge_errors", 0) for r in runs),
             "disagreements": sum(1 for r in runs for e in r.get("expectations", []) if e.get("disagreement")),
             "graded": sum(len(r.get("expectations", [])) for r in runs)}
    bench = {
        "metadata": {**metadata, "runs_per_configuration": _runs_per_config(runs),
                     "evals_run": sorted({r["eval_id"] for r in runs}, key=_sort_key)},
        "runs": runs, "run_summary": summary, "per_eval": per_eval, "delta_stats": delta_stats,
        "skill_fired": fired, "judge": judge, "notes": [],
    }
    bench["notes"] = notes(bench, primary, baseline) + list(extra_notes or [])
    return bench


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
            if sd > FLAKY_STDDEV:
                out.append(f"[{row['eval_name']}] flaky in {c}: pass rate stddev {sd:.2f} across runs")
    s = bench["run_summary"]
    for m, unit in (("time_seconds", "s"), ("tokens", " tokens")):
        p, b = s[primary][m]["mean"], s[baseline][m]["mean"]
        if b:
            out.append(f"cost of {primary} vs {baseline}: {m} {p - b:+.1f}{unit} per run "
                       f"({(p - b) / b * 100:+.0f}%)")
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
    lines = [f"# Skill Benchmark: {md.get('skill_name', '')}", "",
             f"**Model**: {md.get('executor_model', '')}", f"**Date**: {md.get('timestamp', '')}",
             f"**Evals**: {', '.join(map(str, md.get('evals_run', [])))} "
             f"({md.get('runs_per_configuration', 0)} runs each per configuration)", "",
             "## Summary", "", f"| Metric | {label[p]} | {label[b]} | Delta |",
             "|--------|------------|---------------|-------|"]

    def ci(m: str, fmt: str) -> str:
        d = ds[m]
        if d["low"] is None:
            return ""
        return f" [{fmt.format(d['low'])}, {fmt.format(d['high'])}]"
    pr = lambda st: f"{st['mean'] * 100:.0f}% ± {st['stddev'] * 100:.0f}%"  # noqa: E731
    lines.append(f"| Pass Rate | {pr(s[p]['pass_rate'])} | {pr(s[b]['pass_rate'])} | "
                 f"{s['delta']['pass_rate']}{ci('pass_rate', '{:+.2f}')} |")
    lines.append(f"| Time | {s[p]['time_seconds']['mean']:.1f}s ± {s[p]['time_seconds']['stddev']:.1f}s | "
                 f"{s[b]['time_seconds']['mean']:.1f}s ± {s[b]['time_seconds']['stddev']:.1f}s | "
                 f"{s['delta']['time_seconds']}s{ci('time_seconds', '{:+.1f}')} |")
    lines.append(f"| Tokens | {s[p]['tokens']['mean']:.0f} ± {s[p]['tokens']['stddev']:.0f} | "
                 f"{s[b]['tokens']['mean']:.0f} ± {s[b]['tokens']['stddev']:.0f} | "
                 f"{s['delta']['tokens']}{ci('tokens', '{:+.0f}')} |")
    pv = ds["pass_rate"]["p_value"]
    lines += ["", f"Delta is {p} minus {b} (by role). Interval: {int(ds['confidence'] * 100)}% "
                  f"bootstrap clustered by eval; permutation p (stratified by eval) = "
                  f"{'n/a' if pv is None else f'{pv:.3g}'}.", "", "## Per eval", "",
              f"| Eval | {label[p]} | {label[b]} | Delta |", "|------|------|------|------|"]
    for row in bench["per_eval"]:
        lines.append(f"| {row['eval_name']} | {pr(row[p]['pass_rate'])} | {pr(row[b]['pass_rate'])} | "
                     f"{_fmt(row['delta_pass_rate'], '{:+.2f}')} |")
    if bench.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in bench["notes"]]
    return "\n".join(lines) + "\n"
