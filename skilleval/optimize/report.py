"""trigger_opt outputs: ``results.json`` (skill-creator's run_loop shape, reference §3.13,
plus our fields), ``best_description.txt`` and the console summary (a word diff of the
description and the queries whose verdict flipped)."""
from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from rich.table import Table
from rich.text import Text

from skilleval.optimize.apply import recommendation
from skilleval.optimize.selection import (QueryOutcome, outcomes, passed, run_accuracy,
                                          verdicts_under_both)
from skilleval.stats import estimate, mcnemar_exact
from skilleval.trigger.metrics import summarize
from skilleval.trigger.policies import rates_label
from skilleval.trigger.runner import QueryResult
from skilleval.terminal import safe, visible

if TYPE_CHECKING:
    from skilleval.optimize.loop import Optimizer
    from skilleval.optimize.state import LoopState


def _result(o: QueryOutcome, query: str) -> dict[str, Any]:
    rate = o.triggers / o.runs if o.runs else None
    # `runs` are the valid runs (skill-creator reads trigger_rate = triggers / runs).
    return {"query": query, "should_trigger": o.should_trigger, "trigger_rate": rate,
            "triggers": o.triggers, "runs": o.runs,
            # no verdict on too few valid runs: neither a pass nor a failure
            "pass": None if o.insufficient else o.passed, "insufficient": o.insufficient,
            "errors": o.errors, "timeouts": o.timeouts}


def measured(outs: Sequence[QueryOutcome]) -> list[QueryOutcome]:
    """The queries with a verdict: an insufficient one (errors, timeouts) is neither passed
    nor failed, and is left out of every count and rate (it used to count as failed)."""
    return [o for o in outs if not o.insufficient]


def _score(outs: Sequence[QueryOutcome]) -> str | None:
    return f"{passed(outs)}/{len(measured(outs))}" if outs else None


def _test_block(results: list[QueryResult] | None, confidence: float) -> dict[str, Any] | None:
    if not results:
        return None
    s = summarize(results, confidence)
    return {"passed": s.passed, "failed": s.failed, "total": s.passed + s.failed,
            "insufficient": s.insufficient, "score": f"{s.passed}/{s.passed + s.failed}",
            "accuracy": s.queries["accuracy"].to_dict(),
            "run_accuracy": s.runs["accuracy"].to_dict(),
            "precision": s.queries["precision"].to_dict(), "recall": s.queries["recall"].to_dict(),
            "results": [{"query": q.case.query, "should_trigger": q.case.should_trigger,
                         "trigger_rate": q.trigger_rate, "triggers": q.triggers,
                         "runs": q.valid_runs, "pass": q.passed,
                         "insufficient": q.passed is None, "errors": q.errors,
                         "timeouts": q.timeouts} for q in results]}


def build_results(o: "Optimizer", state: "LoopState", tests: dict[str, list[QueryResult]], *,
                  calls: int, partial_test: bool) -> dict[str, Any]:
    conf = o.runner.settings.confidence
    by_id = o.by_id
    best, orig = state.best, state.original
    test_orig = _test_block(tests.get("original"), conf)
    test_best = _test_block(tests.get("best"), conf)
    history = []
    for e in state.entries:
        train = [_result(x, by_id[x.case_id].query) for x in e.train]
        val = [_result(x, by_id[x.case_id].query) for x in e.validation]
        t = test_best if e is best else test_orig if e is orig else None
        history.append({
            "iteration": e.iteration, "candidate": e.candidate, "description": e.description,
            "proposer": e.proposer, "decision": e.decision, "p_value": e.p_value, "rank": e.rank,
            "train_passed": passed(e.train), "train_failed": len(measured(e.train)) - passed(e.train),
            "train_total": len(measured(e.train)), "train_results": train,
            "train_insufficient": len(e.train) - len(measured(e.train)),
            "validation_passed": passed(e.validation) if e.validation else None,
            "validation_failed": len(measured(e.validation)) - passed(e.validation) if e.validation else None,
            "validation_total": len(measured(e.validation)) if e.validation else None,
            "validation_results": val if e.validation else None,
            "train_run_accuracy": run_accuracy(e.train),
            "validation_run_accuracy": run_accuracy(e.validation),
            "test_passed": t["passed"] if t else None, "test_failed": t["failed"] if t else None,
            "test_total": t["total"] if t else None, "test_results": t["results"] if t else None,
            # skill-creator's backward-compatible copies of the train figures
            "passed": passed(e.train), "failed": len(measured(e.train)) - passed(e.train),
            "total": len(measured(e.train)), "results": train,
        })
    test_pair = None
    if tests.get("original") and tests.get("best"):
        both = verdicts_under_both(tests["best"], tests["original"])
        wins = sum(1 for b, o in both if b and not o)
        losses = sum(1 for b, o in both if o and not b)
        test_pair = {"wins": wins, "losses": losses, "p_value": mcnemar_exact(wins, losses),
                     "test": "exact McNemar on per-query pass/fail (information only)"}
    best_train_acc = passed(best.train) / len(measured(best.train)) if measured(best.train) else None
    gap = None
    if test_best and best_train_acc is not None and test_best["accuracy"]["value"] is not None:
        gap = best_train_acc - test_best["accuracy"]["value"]
    n = len(o.cases)
    return {
        "exit_reason": state.exit_reason,
        "original_description": orig.description,
        "best_description": best.description,
        # the description to deploy: the best unless the held-out test overrules it (what
        # optimize.apply=true writes); see optimize.apply.recommendation
        "recommended": recommendation(state, tests, partial_test),
        "best_score": (test_best or {}).get("score") or _score(best.validation) or _score(best.train),
        "best_train_score": _score(best.train),
        "best_test_score": (test_best or {}).get("score"),
        "final_description": state.entries[-1].description,
        # skill-creator counts evaluations, the original's included (its history's length
        # with one description a round); ours also says how many proposal rounds ran
        "iterations_run": state.iteration + 1,
        "proposal_rounds": state.iteration,
        "holdout": round(len(o.split.test) / n, 4) if n else 0.0,
        "train_size": len(o.split.train),
        "test_size": len(o.split.test),
        "history": history,
        # ours
        "skill_name": o.skill.name,
        "variant": o.job.variant.name if o.job.variant is not None else "",
        "description_hash": o.job.description_hash,  # of the starting description
        "validation_size": len(o.split.validation),
        "splitter": o.splitter_name,
        "selected_by": "validation" if o.split.validation else "train",
        "best_validation_score": _score(best.validation),
        "original_train_score": _score(orig.train),
        "original_validation_score": _score(orig.validation),
        "original_test_score": (test_orig or {}).get("score"),
        "test": {"original": test_orig, "best": test_best, "paired": test_pair,
                 "partial": partial_test},
        "train_test_gap": gap,
        # train/validation rates come from the selection policy, test rates from the test's
        "rates": {"selection": rates_label(o.runner.settings),
                  "test": rates_label(o.test_settings())},
        "selection": {"paired_test": o.opt.paired_test, "alpha": o.opt.alpha,
                      "patience": o.opt.patience, "candidates": o.opt.candidates,
                      "max_iterations": o.opt.max_iterations,
                      "reconsider_alpha": o.opt.reconsider_alpha},
        "calls": calls, "calls_cached": o.runner.calls_cached,
        "trial_calls": o.runner.calls_made, "proposer_calls": o.proposer_calls,
        # errors and timeouts are no verdict: in no score above, counted here (per query too)
        "trial_errors": o.runner.errors, "trial_timeouts": o.runner.timeouts,
        "self_check_calls": int(o.job.summary.get("self_check_calls", 0)),
        "cost_usd": o.runner.cost_usd + o.proposer_cost,
        "calls_all_runs": state.calls, "cost_usd_all_runs": state.cost_usd,
        "plan": {"max_calls": o.plan.total, "per_iteration": o.plan.iteration},
        "run_key": state.run_key, "runs": state.runs, "proposer": o.proposer.name,
        "backend": o.job.backend.name, "model": o.job.backend.model,
    }


def log_proposals(output_dir: Path, it: int, request: Any, proposals: list) -> None:
    """``logs/improve_iter_N.json`` (skill-creator §3.14, extended): exactly what the
    proposer was given, and each candidate's prompts and answers."""
    import dataclasses

    logs = output_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    body = {"iteration": it, "request": dataclasses.asdict(request),
            "candidates": [{"final_description": p.description, "char_count": len(p.description),
                            "attempts": p.attempts, "rejected": p.rejected, **p.log}
                           for p in proposals]}
    (logs / f"improve_iter_{it}.json").write_text(json.dumps(body, indent=2, ensure_ascii=False),
                                                  encoding="utf-8")


def write_outputs(o: "Optimizer", result: dict[str, Any]) -> None:
    out = o.job.output_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    (out / "best_description.txt").write_text(result["best_description"] + "\n", encoding="utf-8")
    write_variants(out / "variants.yaml", result)


def write_variants(path: Path, result: dict[str, Any]) -> None:
    """Every description the loop scored, and the best, as ``variants=`` input (issue 15):
    ``skilleval -m +experiment=trigger_eval variants=PATH variant='glob(*)' backend.model=a,b``
    re-measures them on other models (trials already measured come from the cache)."""
    import yaml

    table: dict[str, str] = {}
    for h in result["history"]:
        # "start", not "original": a sweep's "original" is SKILL.md's own wording (which
        # optimize.apply may since have replaced), and a file may not redefine it
        name = "start" if h["iteration"] == 0 else f"it{h['iteration']}-c{h['candidate']}"
        table[name] = h["description"]
    table["best"] = result["best_description"]
    path.write_text("# name -> description, written by trigger_opt (every candidate scored)\n"
                    + yaml.safe_dump(table, sort_keys=False, allow_unicode=True, width=10_000),
                    encoding="utf-8")


def word_diff(old: str, new: str) -> Text:
    a, b = old.split(), new.split()
    text = Text()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    if matcher.ratio() < 0.4:  # a rewrite: interleaving would be unreadable
        text.append(old, style="red strike")
        text.append("\n  → ")
        text.append(new, style="green")
        return text
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            text.append(" ".join(a[i1:i2]) + " ", style="red strike")
        if tag in ("insert", "replace"):
            text.append(" ".join(b[j1:j2]) + " ", style="green")
        if tag == "equal":
            text.append(" ".join(a[i1:i2]) + " ")
    return text


def _fmt(block: dict[str, Any] | None) -> str:
    if not block:
        return "—"
    a = block["accuracy"]
    short = f" ({block['insufficient']} insufficient)" if block.get("insufficient") else ""
    if a["value"] is None:
        return "—" + short
    return f"{block['score']}  {a['value']:.0%} [{a['low']:.0%}, {a['high']:.0%}]{short}"


def _acc(outs: Sequence[QueryOutcome]) -> str:
    n = len(measured(outs))
    short = f" ({len(outs) - n} insufficient)" if n < len(outs) else ""
    if not n:
        return "—" + short
    e = estimate(passed(outs), n)
    return f"{passed(outs)}/{n}  {e.value:.0%} [{e.low:.0%}, {e.high:.0%}]{short}"


def print_summary(o: "Optimizer", state: "LoopState", tests: dict[str, list[QueryResult]],
                  result: dict[str, Any]) -> None:
    con = o.job.out
    best, orig = state.best, state.original
    table = Table(title=f"trigger_opt: {safe(o.skill.name)} ({result['exit_reason']})")
    table.add_column("split")
    table.add_column("original")
    table.add_column("best")
    table.add_row("train", _acc(orig.train), _acc(best.train))
    if o.split.validation:
        table.add_row("validation", _acc(orig.validation), _acc(best.validation))
    test = result["test"]
    table.add_row("[bold]test (held out)[/bold]", _fmt(test["original"]), _fmt(test["best"]))
    con.print(table)
    if len(state.entries) == 1:  # nothing to compare: say why, not "no candidate beat it"
        con.print(f"No candidate was evaluated ({safe(state.exit_reason)}); the original is kept.")
    elif best is orig:
        con.print("No candidate beat the original in a paired comparison; the original is kept.")
    else:
        con.print(Text("description diff: ", style="bold") + word_diff(visible(orig.description), visible(best.description)))
        rec = result["recommended"]
        style = "green" if rec["which"] == "best" else "yellow"
        con.print(f"[bold]recommended:[/bold] [{style}]the {rec['which']}[/{style}] description "
                  f"({safe(rec['reason'])})")
    flips = _flips(o, state, tests)
    if flips:
        con.print("[bold]queries that flipped[/bold] (original → best):")
        for split, q, should, a, b, ok in flips:
            mark = "[green]fixed[/green]" if ok else "[red]broke[/red]"
            exp = "should trigger" if should else "should not"
            con.print(f"  {mark} {split:<10} {exp:<14} {a} → {b}  {safe(repr(q[:80]))}")
    gap = result.get("train_test_gap")
    if gap is not None:
        flag = "  [yellow](large: likely over-fitting)[/yellow]" if gap > 0.25 else ""
        con.print(f"train–test gap of the best: {gap:+.0%}{flag}")
    checks = result["self_check_calls"]
    con.print(f"backend calls: {result['calls']} ({result['trial_calls'] - checks} trials + "
              + (f"{checks} self-check + " if checks else "")
              + f"{result['proposer_calls']} proposer), {result['calls_cached']} trials cached, "
              f"${result['cost_usd']:.4f}; outputs in {safe(o.job.output_dir)}")
    if result["trial_errors"] or result["trial_timeouts"]:
        con.print(f"[yellow]{result['trial_errors']} trial(s) errored and {result['trial_timeouts']} timed "
                  "out: no verdict, in no score above (each query's errors are in results.json)[/yellow]")


def _flips(o: "Optimizer", state: "LoopState", tests: dict[str, list[QueryResult]]) -> list[tuple]:
    best, orig = state.best, state.original
    out = []
    pairs: list[tuple[str, list[QueryOutcome], list[QueryOutcome]]] = [
        ("train", orig.train, best.train), ("validation", orig.validation, best.validation)]
    if tests.get("original") and tests.get("best"):
        pairs.append(("test", outcomes(tests["original"]), outcomes(tests["best"])))
    for split, a_list, b_list in pairs:
        before = {x.case_id: x for x in a_list}
        for b in b_list:
            a = before.get(b.case_id)
            # an unmeasured (insufficient) query has no verdict to flip
            if a is not None and not (a.insufficient or b.insufficient) and a.passed != b.passed:
                out.append((split, o.by_id[b.case_id].query, b.should_trigger,
                            f"{a.triggers}/{a.runs}", f"{b.triggers}/{b.runs}", b.passed))
    return out
