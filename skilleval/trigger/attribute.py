"""The `attribute` experiment: which sentence of a description earns triggers, which causes
false ones (see `skilleval.trigger.attribution` for the estimators).

Each coalition of sentences is evaluated once, through the ordinary trial runner (fixed
policy, ``trigger.runs`` per query) with the skill's description replaced by those sentences
(`Skill.with_description`: name, body and files unchanged). Trials are content-addressed, so
a coalition met again (in this run, a later one, or another experiment) is read from the
store instead of paid for.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from skilleval.datasets import check_trigger_inputs
from skilleval.errors import BudgetExhausted, UserError
from skilleval.stats import signed
from skilleval.trigger import attribution as attr

if TYPE_CHECKING:
    from skilleval.app import JobContext


#: the most sentences exact Shapley enumerates (2^12 = 4,096 subsets), and the most permutations
EXACT_LIMIT, PERMUTATION_LIMIT = 12, 10_000


def run_attribute(job: "JobContext") -> int:
    from rich.table import Table

    from skilleval.terminal import safe as escape  # rich markup *and* control characters

    from skilleval.app import checked_number
    from skilleval.trigger.experiment import run_self_check
    from skilleval.trigger.runner import require_trustworthy

    cfg = job.cfg.get("attribute") or {}
    exact_max = checked_number("attribute.exact_max", cfg.get("exact_max", 6), int)
    n_perms = checked_number("attribute.permutations", cfg.get("permutations", 64), int)
    boot = checked_number("attribute.bootstrap", cfg.get("bootstrap", 2000), int)
    for key, got, least in (("exact_max", exact_max, 0), ("permutations", n_perms, 1), ("bootstrap", boot, 1)):
        if got < least:  # 0 permutations or resamples crashed with a traceback after the calls
            raise UserError(f"attribute.{key} must be at least {least}, got {got}")
    # exact Shapley plans every subset at once: 2^25 of them filled the memory before the
    # plan line was printed (the kernel killed the run, which was left "running")
    for key, got, most, why in (("exact_max", exact_max, EXACT_LIMIT, f"exact Shapley over n sentences "
                                 f"measures all 2^n subsets: {2 ** EXACT_LIMIT:,} at {EXACT_LIMIT}"),
                                ("permutations", n_perms, PERMUTATION_LIMIT, "each permutation plans up "
                                 "to one description per sentence")):
        if got > most:
            raise UserError(f"attribute.{key} must be at most {most:,}, got {got:,} ({why}; longer "
                            "descriptions are sampled with attribute.permutations)")
    skill, cases = job.prepared or check_trigger_inputs(job)  # check_inputs read them already
    distractors = job.load_distractors()
    sentences = attr.split_sentences(skill.description)
    n = len(sentences)
    if n < 2:
        raise UserError(f"{skill.path}: the description has {n} sentence(s); attribution needs 2+")
    positive = np.array([c.should_trigger for c in cases])
    settings = job.trigger_settings(policy="fixed")
    runner = job.new_runner(settings)
    exact = n <= exact_max
    perms = [] if exact else attr.permutations(n, n_perms, int(job.cfg.get("seed", 0)))
    plan = attr.coalitions_exact(n) if exact else attr.coalitions_of(perms)
    full = frozenset(range(n))
    plan = list(dict.fromkeys([*plan, full, *(full - {i} for i in range(n))]))
    job.console.print(
        f"[bold]attribute[/bold] {escape(skill.name)}: {n} sentences, "
        f"{'exact Shapley' if exact else f'Shapley from {n_perms} permutations'}, "
        f"{len(plan)} descriptions × {len(cases)} queries × {settings.runs} runs "
        f"(≤{len(plan) * runner.max_calls(len(cases))} calls)")
    job.run(run_self_check(job, skill, distractors))
    rates: dict[frozenset[int], np.ndarray] = {}
    measured: list[Any] = []  # every coalition's QueryResults: errors are counted and shown
    with job.progress():
        for coalition in plan:
            # The full coalition is the description verbatim, not its sentences re-joined: its
            # trials are then the ones other experiments (trigger_eval, ...) already paid for.
            variant = skill.with_description(skill.description if coalition == full
                                             else attr.join(sentences, coalition))
            try:
                results = job.run(runner.evaluate(variant, cases, distractors,
                                                  label=f"{len(coalition)}/{n} sentences"))
            except BudgetExhausted:
                # A budget stop, not bad input: exit 4 through the app's one budget-stop path
                # (summary marked, run stored as budget_stopped); the trials measured so far
                # are in the store and a rerun with more budget pays only for the rest.
                job.store.close()
                job.console.print("[yellow]budget ran out before every coalition was measured; "
                                  "no attribution printed (measured trials are kept in the "
                                  "store: raise budget.max_calls and rerun)[/yellow]")
                raise
            measured.extend(results)
            rates[coalition] = np.array([q.triggers / q.valid_runs if q.valid_runs else np.nan
                                         for q in results])
    job.store.close()
    errors = {"trials": sum(q.runs for q in measured), "errors": sum(q.errors for q in measured),
              "timeouts": sum(q.timeouts for q in measured)}
    # exit 3 when nothing was measured or more than trigger.max_error_rate errored (as trigger_eval)
    require_trustworthy(measured, job.cfg.trigger.get("max_error_rate", 1.0),
                        "attribution (not printed) and its figures")

    def value(s: frozenset[int]) -> np.ndarray:
        return rates[s]

    loo = attr.leave_one_out(n, value)
    marg = None if exact else attr.marginals(n, perms, value)
    shap = attr.shapley_exact(n, value) if marg is None else marg.mean(axis=0)
    conf = settings.confidence
    rows = []
    for i, sentence in enumerate(sentences):
        row: dict[str, Any] = {"index": i, "sentence": sentence}
        for name, per_query in (("loo", loo[i]), ("shapley", shap[i])):
            for metric, mask in (("recall", positive), ("false_trigger_rate", ~positive)):
                per_perm = marg[:, i][:, mask] if name == "shapley" and marg is not None else None
                mean, lo, hi = attr.paired_interval(per_query[mask], boot=boot, confidence=conf,
                                                    seed=i, per_perm=per_perm)
                row[f"{name}_{metric}"] = {"value": mean, "low": lo, "high": hi,
                                           "queries": int((~np.isnan(per_query[mask])).sum())}
        rows.append(row)
    ranked = sorted(rows, key=lambda r: -(r["shapley_recall"]["value"] or 0.0))
    complete = ~np.isnan(np.vstack(list(rates.values()))).any(axis=0)
    out = {"skill": skill.name, "sentences": sentences, "method": "exact" if exact else "sampled",
           "permutations": None if exact else n_perms, "coalitions": len(rates),
           "runs": settings.runs, "confidence": conf,
           "unit": "queries (paired bootstrap)" if exact else
                   "queries and permutations (paired two-way bootstrap)",
           "ranking": [r["index"] for r in ranked], "attribution": rows, **errors,
           # what the effects are changes of, under the description as written: each query's
           # trigger rate over its valid trials, averaged over the queries of each kind (not a
           # recall of verdicts; this was written "recall_full" and "ftr_full" before)
           # over the queries measured under every description, the ones the Shapley effects
           # are over (a query an error left unmeasured under some description has no effect):
           # a base over all queries was not the rate the effects change
           "full_description_mean_trigger_rate": {
               "should_trigger": _mean(rates[full][positive & complete]),
               "should_not_trigger": _mean(rates[full][~positive & complete]),
               "queries": {"should_trigger": int((positive & complete).sum()),
                           "should_not_trigger": int((~positive & complete).sum())},
               "of": {"should_trigger": int(positive.sum()), "should_not_trigger": int((~positive).sum())}}}
    (job.output_dir / "results.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    # the viewer's Attribution page and the Runs page's headline read the table from the run
    # row, as the Routing page reads its matrix (a few sentences: small)
    job.summary.update(calls_made=runner.calls_made, calls_cached=runner.calls_cached,
                       cost_usd=runner.cost_usd, coalitions=len(rates), **errors, attribution=out)
    table = Table(title=f"sentence attribution ({out['method']} Shapley; effect on recall and on "
                        f"false-trigger rate, {conf:.0%} paired intervals over queries"
                        f"{'' if exact else ' and permutations'})",
                  caption="recall: mean trigger rate over should-trigger queries; FTR: over "
                          "should-not-trigger queries (each query's rate over its valid trials)")
    for col in ("#", "sentence", "Shapley Δrecall", "Shapley ΔFTR", "drop it: Δrecall", "drop it: ΔFTR"):
        table.add_column(col, overflow="fold")
    for r in ranked:
        table.add_row(str(r["index"] + 1), escape(r["sentence"]), _fmt(r["shapley_recall"]),
                      _fmt(r["shapley_false_trigger_rate"]), _fmt(r["loo_recall"], neg=True),
                      _fmt(r["loo_false_trigger_rate"], neg=True))
    job.out.print(table)
    base = out["full_description_mean_trigger_rate"]
    def over(kind: str) -> str:
        n, of = base["queries"][kind], base["of"][kind]
        return f"{n}" if n == of else f"{n} of {of}"
    job.out.print(f"full description: mean trigger rate {_rate(base['should_trigger'])} over "
                  f"{over('should_trigger')} should-trigger queries, {_rate(base['should_not_trigger'])} "
                  f"over {over('should_not_trigger')} should-not-trigger queries (the rates the "
                  "Shapley effects above change: the queries measured under every description)")
    job.out.print(f"trials: {errors['trials']}; errors {errors['errors']}, timeouts "
                  f"{errors['timeouts']} (left out of every rate, never a 'no'; a query whose "
                  f"trials all errored for a description it needs is left out of that effect)")
    return 0


def _rate(x: float | None) -> str:
    return "n/a (no query measured)" if x is None else f"{x:.2f}"


def _mean(x: np.ndarray) -> float | None:
    x = x[~np.isnan(x)]
    return float(x.mean()) if len(x) else None


def _fmt(e: dict[str, Any], neg: bool = False) -> str:
    """Leave-one-out columns show what *removing* the sentence does (the negated effect)."""
    if e["value"] is None:  # no query measured under every description this effect needs
        return "n/a (0 queries measured)"
    s = -1 if neg else 1
    if e["low"] is None:
        return f"{signed(s * e['value'])} (CI n/a: {e['queries']} query)"
    lo, hi = sorted((s * e["low"], s * e["high"]))
    return f"{signed(s * e['value'])} [{signed(lo)}, {signed(hi)}]"


run_attribute.reports = ()  # its own results and summary (reporting.applies)  # type: ignore[attr-defined]
run_attribute.check_inputs = check_trigger_inputs  # type: ignore[attr-defined]


def attribute_factory(params: Any) -> Any:
    return run_attribute
