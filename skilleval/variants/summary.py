"""The sweep summary: description variants × models, with paired tests (issue 15).

Printed at the end of a multirun (`SweepSummaryCallback`, a Hydra callback registered in
``conf/config.yaml``) and by ``skilleval diff --sweep SWEEP_ID`` (`sweep_diff_main`). It is
built from the store only (the ``queries`` rows of the sweep's trigger_eval jobs joined with
their ``runs`` rows), so it costs no call and can be rebuilt any time.

* One cell per (variant, model): query accuracy over the measured queries with its Wilson
  interval. Queries without a verdict (too few valid runs) are left out and counted.
* Per model, the best variant and an exact two-sided McNemar test against the original over
  the queries both measured (discordant pairs only: b = best right and original wrong, c =
  the reverse). The original is the job whose variant is ``original`` or unset. The best is
  picked after seeing K variants' results, so its p-value is Bonferroni-adjusted over the K
  (``p_adjusted`` = min(1, K·p)) and "significant" is said of that: the raw p of a winner
  chosen among three is not a 5 % test.
* A note when the best variant differs between models.
"""
from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback

from skilleval.variants.source import ORIGINAL


@dataclass
class Cell:
    variant: str
    model: str
    run_id: str
    description_hash: str
    passed: dict[str, bool]  # case_id -> passed (measured queries only)
    insufficient: int
    accuracy: dict[str, Any] = field(default_factory=dict)  # stats.Estimate.to_dict()
    skill: str = ""


@dataclass
class ModelVerdict:
    model: str
    best: str
    best_accuracy: float | None
    versus_original: dict[str, Any] | None  # b, c, n, p_value; None when no original
    skill: str = ""


@dataclass
class SweepSummary:
    sweep_id: str
    variants: list[str]
    models: list[str]
    cells: list[Cell]
    verdicts: list[ModelVerdict]
    notes: list[str]
    #: the skills the sweep measured: variants are compared within a skill, never across
    #: (a sweep over skill=a,b with no variants showed b's accuracy as "original", unnamed)
    skills: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sweep_id_of(sweep_dir: str | Path) -> str:
    """The id `app.sweep_identity` gives the jobs of the sweep writing into `sweep_dir`."""
    return hashlib.sha256(str(Path(sweep_dir).resolve()).encode()).hexdigest()[:16]


def build(store: Any, sweep_id: str, confidence: float = 0.95) -> SweepSummary | None:
    """The summary of a sweep's trigger_eval jobs, or None when the store has none."""
    from skilleval.stats import estimate

    if not {"queries", "runs"} <= set(store.tables()):
        return None
    rows = store.query(
        "SELECT q.run_id, q.case_id, q.passed, q.skill, r.model, r.job_num, "
        "coalesce(r.variant, '') AS variant, coalesce(r.description_hash, '') AS dhash "
        "FROM queries q JOIN runs r ON q.run_id = r.run_id "
        "WHERE q.sweep_id = ? AND q.experiment = 'trigger_eval' "
        "ORDER BY r.job_num, q.case_id", [sweep_id]).to_pylist()
    if not rows:
        return None
    cells: dict[str, Cell] = {}
    for r in rows:
        c = cells.get(r["run_id"])
        if c is None:
            c = cells[r["run_id"]] = Cell(r["variant"] or ORIGINAL, str(r["model"]), r["run_id"],
                                          r["dhash"], {}, 0, skill=str(r["skill"]))
        if r["passed"] is None:
            c.insufficient += 1
        else:
            c.passed[r["case_id"]] = bool(r["passed"])
    by_key: dict[tuple[str, str, str], Cell] = {}
    notes: list[str] = []
    for c in cells.values():  # job order: a later job of the same cell is shown instead
        if (c.skill, c.variant, c.model) in by_key:
            notes.append(f"{c.skill}: {c.variant} on {c.model} was measured by more than one job "
                         f"(other sweep values); the last one ({c.run_id}) is shown")
        k = sum(c.passed.values())
        c.accuracy = estimate(k, len(c.passed), confidence).to_dict()
        by_key[(c.skill, c.variant, c.model)] = c
    skills = sorted({s for s, _, _ in by_key})
    variants = sorted({v for _, v, _ in by_key}, key=lambda v: (v != ORIGINAL, v))
    models = sorted({m for _, _, m in by_key})
    verdicts = [v for skill in skills for v in _verdicts(by_key, skill, variants, models, notes,
                                                          named=len(skills) > 1)]
    return SweepSummary(sweep_id, variants, models, list(by_key.values()), verdicts, notes, skills)


def _verdicts(by_key: dict[tuple[str, str, str], Cell], skill: str, variants: list[str],
              models: list[str], notes: list[str], *, named: bool) -> list[ModelVerdict]:
    """Each model's best variant of `skill` and its paired test against the original."""
    from skilleval.stats import mcnemar_exact

    who = f"{skill}, " if named else ""
    verdicts: list[ModelVerdict] = []
    for m in models:
        mine = [by_key[(skill, v, m)] for v in variants if (skill, v, m) in by_key]
        if not mine:
            continue
        best = max(mine, key=lambda c: (c.accuracy["value"] if c.accuracy["value"] is not None
                                        else -1.0, c.variant == ORIGINAL))
        orig = by_key.get((skill, ORIGINAL, m))
        versus = None
        if orig is not None:
            shared = sorted(set(best.passed) & set(orig.passed))
            b = sum(1 for q in shared if best.passed[q] and not orig.passed[q])
            c_ = sum(1 for q in shared if orig.passed[q] and not best.passed[q])
            k = sum(1 for c in mine if c.variant != ORIGINAL)
            p = mcnemar_exact(b, c_)
            versus = {"b": b, "c": c_, "n": len(shared), "p_value": p,
                      "variants_compared": k, "p_adjusted": min(1.0, k * p),
                      "test": "exact McNemar, two-sided, over the queries both measured; "
                              "p_adjusted: Bonferroni over the variants the best was picked from"}
        verdicts.append(ModelVerdict(m, best.variant, best.accuracy["value"], versus, skill=skill))
        if orig is None:
            notes.append(f"{who}{m}: the original was not measured in this sweep, so the best "
                         "variant has no paired test (add variant=original)")
    if len({v.best for v in verdicts}) > 1:
        notes.append(f"{who}the best variant differs between models: "
                     + "; ".join(f"{v.model}: {v.best}" for v in verdicts))
    return verdicts


def render(summary: SweepSummary, console: Any) -> None:
    """The table of each skill the sweep measured (one, usually), then the verdicts and notes."""
    from rich.markup import escape

    skills = summary.skills or [""]
    for skill in skills:
        named = f" of {escape(skill)}" if len(skills) > 1 else ""
        console.print(f"[bold]sweep {summary.sweep_id}[/bold]: query accuracy [95% CI]{named} by "
                      "variant × model", soft_wrap=True)
        console.print(_table(summary, skill))
        for v in summary.verdicts:
            if v.skill == skill:
                console.print(_verdict_line(v, f"{skill}, " if named else ""))
    for n in summary.notes:
        console.print(f"note: {escape(n)}")


def _table(summary: SweepSummary, skill: str) -> Any:
    from rich.markup import escape
    from rich.table import Table

    cells = {(c.variant, c.model): c for c in summary.cells if c.skill == skill}
    table = Table()
    table.add_column("variant")
    for m in summary.models:
        table.add_column(escape(m), justify="right")
    for v in summary.variants:
        if not any((v, m) in cells for m in summary.models):
            continue  # a variant another skill's jobs measured
        row = [escape(v)]
        for m in summary.models:
            c = cells.get((v, m))
            if c is None or c.accuracy["value"] is None:
                row.append("—")
                continue
            a = c.accuracy
            extra = f" ({c.insufficient} insufficient)" if c.insufficient else ""
            row.append(f"{a['value']:.0%} [{a['low']:.0%}–{a['high']:.0%}] {a['k']}/{a['n']}{extra}")
        table.add_row(*row)
    return table


def _verdict_line(v: ModelVerdict, who: str) -> str:
    from rich.markup import escape

    line = f"{escape(who + v.model)}: best {escape(v.best)}"
    vs = v.versus_original
    if v.best == ORIGINAL:
        line += " (the original itself)"
    elif vs is not None:
        sig = "significant" if vs["p_adjusted"] < 0.05 else "not significant"
        line += (f" vs original: +{vs['b']}/-{vs['c']} over {vs['n']} queries, exact McNemar "
                 f"p={vs['p_value']:.3g}, Bonferroni over {vs['variants_compared']} variants "
                 f"p={vs['p_adjusted']:.3g} ({sig})")
    return line


class SweepSummaryCallback(Callback):
    """Hydra calls this after the last job of a multirun (``hydra.callbacks`` in config.yaml)."""

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        from skilleval.terminal import PlainConsole

        from skilleval.store.catalog import Store, resolve_root

        try:
            sweep_dir = Path(str(config.hydra.sweep.dir))
            store = Store(resolve_root(config.get("store", {}).get("root")))
            summary = build(store, sweep_id_of(sweep_dir))
            if summary is None or len(summary.cells) < 2:
                return
            render(summary, PlainConsole())
            sweep_dir.mkdir(parents=True, exist_ok=True)
            (sweep_dir / "sweep_summary.json").write_text(
                json.dumps(summary.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        except Exception as exc:  # the jobs' results stand; say the summary failed, loudly
            print(f"skilleval: warning: sweep summary failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)


def sweep_diff_main(argv: list[str]) -> int:
    """``skilleval diff --sweep SWEEP_ID [--store PATH] [--format table|json]``."""
    from skilleval.terminal import PlainConsole

    from skilleval.store.catalog import Store, resolve_root

    from skilleval.cliargs import ArgParser  # bad usage: one line, exit 2

    ap = ArgParser(prog="skilleval diff --sweep",
                   description="Compare the description variants of a sweep: accuracy by variant "
                               "x model, and each model's best vs the original (exact McNemar).")
    ap.add_argument("--sweep", required=True, metavar="SWEEP_ID")
    ap.add_argument("--store", default=None, help="store root (default: $SKILLEVAL_STORE)")
    ap.add_argument("--format", choices=("table", "json"), default="table")
    args = ap.parse_args(argv)
    store = Store(resolve_root(args.store))
    summary = build(store, args.sweep)
    if summary is None:
        print(f"skilleval: error: no trigger_eval jobs of sweep {args.sweep!r} in {store.root}",
              file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
    else:
        render(summary, PlainConsole())
    return 0


if __name__ == "__main__":  # ``python -m skilleval.variants.summary --sweep ID``: as `diff --sweep`
    from skilleval.cli import main

    main(["diff", *sys.argv[1:]])
