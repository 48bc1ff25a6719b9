"""``compare``: blind A/B comparison in both orders, then an unblinding analyzer.

For every eval x repeat, the primary and baseline arms' outputs are judged twice with
skill-creator's comparator rubric: once as (A=primary, B=baseline), once swapped. The two
verdicts are unblinded; when they disagree the pair is a TIE, and the share of pairs whose two
orders agree is reported as *position consistency*. Then the analyzer (post-hoc mode) reads
the comparison, both skills and both transcripts, and writes ``analysis.json`` per eval.
Comparisons are cached in the store by the two execution keys and the order.
"""
from __future__ import annotations

import asyncio
import json
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from skilleval import sample_key
from skilleval.functional.experiment import prepare
from skilleval.functional.prompts import (analyzer_prompt, comparator_prompt, extract_json,
                                          reask_prompt, render_files, validate_analysis,
                                          validate_comparison)
from skilleval.functional.records import digest, now, outcome_digest, rows_by_key
from skilleval.functional.runner import RunRecord
from skilleval.functional.workspace import _dump, next_iteration
from skilleval.terminal import safe

if TYPE_CHECKING:
    from skilleval.app import JobContext

VERSION = 1


async def ask_json(backend: Any, prompt: str, validate: Any, retries: int = 1,
                   sample: str | None = None) -> tuple[Any, str | None]:
    """``sample``: which repetition this request is (see ``skilleval.sample_key``)."""
    ask, error = prompt, None
    for _ in range(retries + 1):
        try:
            with sample_key.keyed(sample) if sample is not None else nullcontext():
                reply = await backend.complete(ask, max_tokens=4096)
            return validate(extract_json(reply.text)), None
        except ValueError as exc:
            error = str(exc)
            ask = reask_prompt(prompt, error)
        except Exception as exc:  # noqa: BLE001 - a failed call is recorded, not raised
            return None, f"{type(exc).__name__}: {exc}"
    return None, f"invalid reply: {error}"


def _files(rec: RunRecord) -> str:
    return render_files(rec.request.sandbox, [o.path for o in rec.result.outputs])


async def compare_pair(backend: Any, prim: RunRecord, base: RunRecord,
                       key: str | None = None) -> dict[str, Any]:
    """``key``: the pair's comparison key; each order's request is keyed by it, so a simulator
    answers a pair the same way whatever the order the pairs are compared in."""
    exps = [e.text for e in prim.case.expectations]
    fp, fb = _files(prim), _files(base)
    (c1, e1), (c2, e2) = await asyncio.gather(
        ask_json(backend, comparator_prompt(prim.case.prompt, exps, fp, fb), validate_comparison,
                 sample=None if key is None else f"compare|{key}|1"),
        ask_json(backend, comparator_prompt(prim.case.prompt, exps, fb, fp), validate_comparison,
                 sample=None if key is None else f"compare|{key}|2"))
    if c1 is None or c2 is None:
        return {"status": "judge_error", "error": e1 or e2}
    names = {"primary": prim.arm.name, "baseline": base.arm.name}
    w1 = {"A": names["primary"], "B": names["baseline"], "TIE": "TIE"}[c1["winner"]]
    w2 = {"A": names["baseline"], "B": names["primary"], "TIE": "TIE"}[c2["winner"]]
    score_p = (c1["rubric"]["A"]["overall_score"] + c2["rubric"]["B"]["overall_score"]) / 2
    score_b = (c1["rubric"]["B"]["overall_score"] + c2["rubric"]["A"]["overall_score"]) / 2
    return {"status": "ok", "error": None, "order1": c1, "order2": c2, "order1_winner_arm": w1,
            "order2_winner_arm": w2, "winner_arm": w1 if w1 == w2 else "TIE",
            "consistent": w1 == w2, "score_primary": score_p, "score_baseline": score_b}


async def run_compare_async(job: "JobContext", setup: Any) -> dict[str, Any]:
    from skilleval.functional.experiment import run_records

    prim_arm, base_arm = setup.arm("primary"), setup.arm("baseline")
    records = await run_records(job, setup, [prim_arm, base_arm], grade=False)
    pairs: list[tuple[RunRecord, RunRecord]] = []
    for r in records:
        if r.arm is prim_arm:
            other = next(o for o in records if o.arm is base_arm and o.case.id == r.case.id
                         and o.repeat == r.repeat)
            if r.result and r.result.ok and other.result and other.result.ok:
                pairs.append((r, other))
    # The comparator sees the prompt, the expectations and both outcomes: all are in the key.
    keys = [digest("compare", VERSION, p.request.key, b.request.key, outcome_digest(p.result),
                   outcome_digest(b.result), [e.fingerprint() for e in p.case.expectations])
            for p, b in pairs]
    cached = rows_by_key(job.store.lookup("comparisons", "key", keys, where="status = 'ok'"))
    sem = asyncio.Semaphore(int(setup.fcfg.get("concurrency", 4)))

    async def one(pair: tuple[RunRecord, RunRecord], key: str) -> dict[str, Any]:
        row = cached.get(key)
        if row is not None:
            c = json.loads(row["comparison_json"])
            return {**c, "cached": True}
        async with sem:
            # the runs' labels, not the stored key (which holds the endpoint): see run_label
            return await compare_pair(setup.runner.model_backend, *pair,
                                      key=f"{pair[0].request.run_label}|{pair[1].request.run_label}")
    results = await asyncio.gather(*(one(p, k) for p, k in zip(pairs, keys)))
    ws = Path(setup.fcfg["workspace"]).expanduser() if setup.fcfg.get("workspace") else job.output_dir / "workspace"
    it = ws / f"iteration-{setup.fcfg.get('iteration') or max(1, next_iteration(ws) - 1)}"
    analyses: dict[str, Any] = {}
    for case in setup.cases:
        idx = [i for i, (p, _) in enumerate(pairs) if p.case.id == case.id and results[i]["status"] == "ok"]
        wins = Counter(results[i]["winner_arm"] for i in idx)
        for n, i in enumerate(idx):
            _dump(it / case.dir_name / f"comparison-{n + 1}.json",
                  comparison_file(results[i], prim_arm.name, base_arm.name))
        decisive = [a for a in (prim_arm.name, base_arm.name) if wins[a]]
        if not decisive:
            continue
        winner = max(decisive, key=lambda a: wins[a])
        i = next(i for i in idx if results[i]["winner_arm"] == winner)
        p, b = pairs[i]
        wrec, lrec = (p, b) if winner == prim_arm.name else (b, p)
        comp = results[i]["order1"]
        letter = "A" if winner == prim_arm.name else "B"
        analysis, err = await ask_json(setup.runner.model_backend, analyzer_prompt(
            comp, letter, _skill_label(wrec), wrec.arm.skill.body if wrec.arm.skill else "",
            _skill_label(lrec), lrec.arm.skill.body if lrec.arm.skill else "",
            wrec.result.transcript, lrec.result.transcript), validate_analysis,
            sample=f"analyze|{p.request.run_label}|{b.request.run_label}")
        analyses[case.id] = analysis if analysis is not None else {"error": err}
        _dump(it / case.dir_name / "analysis.json", analyses[case.id])
    rows = []
    for (p, b), k, res in zip(pairs, keys, results):
        if res.get("cached"):
            continue
        rows.append({**job.identity_row(), "ts": now(), "key": k, "skill": setup.skill.name,
                     "eval_id": p.case.id, "eval_name": p.case.name, "repeat": p.repeat,
                     "arm_primary": prim_arm.name, "arm_baseline": base_arm.name,
                     "execution_primary": p.request.key, "execution_baseline": b.request.key,
                     "winner_arm": res.get("winner_arm"), "order1_winner_arm": res.get("order1_winner_arm"),
                     "order2_winner_arm": res.get("order2_winner_arm"), "consistent": res.get("consistent"),
                     "score_primary": res.get("score_primary"), "score_baseline": res.get("score_baseline"),
                     "status": res["status"], "error": res.get("error"),
                     "comparison_json": json.dumps({k2: v for k2, v in res.items() if k2 != "cached"}),
                     "analysis_json": json.dumps(analyses.get(p.case.id)) if p.case.id in analyses else None})
    w = job.store.writer("comparisons", job.experiment, job.run_id)
    w.write(rows)
    w.close()
    ok = [r for r in results if r["status"] == "ok"]
    tally = Counter(r["winner_arm"] for r in ok)
    # an execution that errored or timed out leaves its pair uncompared: counted, never a tie
    executions = {a.name: dict(Counter(("ok" if r.result is not None and r.result.ok else
                                        r.result.status if r.result is not None else "not run")
                                       for r in records if r.arm is a)) for a in (prim_arm, base_arm)}
    planned = {c.id: sum(1 for r in records if r.arm is prim_arm and r.case.id == c.id) for c in setup.cases}
    compared = Counter(p.case.id for p, _ in pairs)
    per_eval_wins = {c.name: Counter(("DISAGREE" if not results[i].get("consistent") else results[i]["winner_arm"])
                                     for i, (p, _) in enumerate(pairs)
                                     if p.case.id == c.id and results[i]["status"] == "ok")
                     for c in setup.cases}
    return {
        "primary": prim_arm.name, "baseline": base_arm.name, "pairs": len(pairs), "judged": len(ok),
        "judge_errors": len(results) - len(ok), "wins": {prim_arm.name: tally[prim_arm.name],
                                                         base_arm.name: tally[base_arm.name], "TIE": tally["TIE"]},
        # of the TIEs, the pairs whose two orders named different winners (not a judged tie)
        "orders_disagree": sum(1 for r in ok if not r.get("consistent")),
        "executions": executions, "pairs_planned": sum(planned.values()),
        "pairs_not_compared": {c.name: planned[c.id] - compared[c.id] for c in setup.cases
                               if planned[c.id] > compared[c.id]},
        "position_consistency": round(sum(r["consistent"] for r in ok) / len(ok), 4) if ok else None,
        "sign_test_p": sign_test_by_eval(per_eval_wins, prim_arm.name, base_arm.name),
        "sign_test_unit": "eval (an eval counts for the arm that won more of its repeats)",
        "per_eval": {name: dict(w) for name, w in per_eval_wins.items()},
        "workspace": str(it), "analyses": len(analyses),
    }


def comparison_file(result: dict[str, Any], primary: str, baseline: str) -> dict[str, Any]:
    """``comparison-N.json`` in skill-creator's shape, from both orders.

    The body (reasoning, rubric, scores) is the first order's, where A is the primary; the
    top-level ``winner`` is the *unblinded both-orders* verdict in that order's letters, so a
    pair whose two orders disagree is a ``TIE`` here too, never the first order's "A".
    """
    letter = {primary: "A", baseline: "B"}.get(result["winner_arm"], "TIE")
    order1 = result["order1"]
    return {**order1, "winner": letter, "order1_winner": order1.get("winner"),
            "unblinded": {"A": primary, "B": baseline},
            "both_orders": {k: result[k] for k in ("order1_winner_arm", "order2_winner_arm",
                                                   "winner_arm", "consistent")}}


def sign_test_by_eval(per_eval_wins: dict[str, Counter], primary: str, baseline: str) -> float | None:
    """Two-sided sign test with the *eval* as the unit.

    Repeats of one eval share its prompt and inputs, so they are not independent trials: six
    wins on one eval are one eval won, not six. Each eval counts for the arm that won more of
    its pairs (ties and even splits drop out); the p-value is the exact binomial test over
    the evals that lean one way. None when no eval does.
    """
    from scipy import stats

    lean = [w[primary] - w[baseline] for w in per_eval_wins.values()]
    k, n = sum(1 for x in lean if x > 0), sum(1 for x in lean if x != 0)
    return float(stats.binomtest(k, n).pvalue) if n else None


def _skill_label(rec: RunRecord) -> str:
    return f"{rec.arm.name}:{rec.arm.skill.name}" if rec.arm.skill else f"{rec.arm.name}:(no skill)"


def run_compare(job: "JobContext") -> int:
    return job.run(compare_async(job))


async def compare_async(job: "JobContext") -> int:
    from skilleval.errors import HarnessError

    setup = job.prepared or prepare(job)  # check_inputs built it already
    summary = await run_compare_async(job, setup)
    (job.output_dir / "comparison_summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    t = Table(title=f"blind comparison: {summary['primary']} vs {summary['baseline']} "
                    f"({summary['judged']} pairs, both orders)")
    for col in ("eval", f"{summary['primary']} wins", f"{summary['baseline']} wins", "ties",
                "orders disagree", "not compared"):
        t.add_column(col, justify="left" if col == "eval" else "right")
    lost = summary["pairs_not_compared"]
    for ev, w in summary["per_eval"].items():
        judged = sum(w.values())
        t.add_row(safe(ev), *(str(w.get(k, 0)) if judged else "—" for k in
                              (summary["primary"], summary["baseline"], "TIE", "DISAGREE")),
                  f"[yellow]{lost[ev]}[/yellow]" if lost.get(ev) else "0")
    w = summary["wins"]
    t.add_row("[bold]all[/bold]", str(w[summary["primary"]]), str(w[summary["baseline"]]),
              str(w["TIE"] - summary["orders_disagree"]), str(summary["orders_disagree"]), str(sum(lost.values())))
    job.out.print(t)
    bad = {a: n for a, c in summary["executions"].items() if (n := sum(v for k, v in c.items() if k != "ok"))}
    if bad:
        job.out.print(f"[yellow]executions that errored or timed out: "
                      f"{', '.join(f'{safe(a)} {n}' for a, n in bad.items())}; "
                      f"{sum(lost.values())} of {summary['pairs_planned']} pairs not compared (in no count; "
                      "an eval with none is shown —)[/yellow]")
    pc, p = summary["position_consistency"], summary["sign_test_p"]
    job.out.print(f"position consistency: {'n/a' if pc is None else f'{pc:.0%}'} (orders agreed); "
                  f"sign test over evals p = {'n/a' if p is None else f'{p:.3g}'}; judge errors: {summary['judge_errors']}")
    # the files are per eval: say where, and why an eval may have no analysis
    job.console.print(f"comparisons: {safe(summary['workspace'])}/eval-*/comparison-N.json; "
                      f"analysis.json in {summary['analyses']} of {len(summary['per_eval'])} eval "
                      "folders (an eval where neither arm won a pair has none)", soft_wrap=True)
    job.summary.update(summary)
    if summary["pairs"] and not summary["judged"]:
        raise HarnessError("every comparison failed: the comparator produced no valid verdict")
    return 0


run_compare.reports = ()  # its own results and summary (reporting.applies)  # type: ignore[attr-defined]
# evals, arms and input files, read as functional_eval reads them: bad ones are refused
# (exit 2) before the run's row is stored
run_compare.check_inputs = prepare  # type: ignore[attr-defined]


def compare_factory(params: Any) -> Any:
    return run_compare
