"""The ``draft_evals`` experiment: draft a trigger eval set for a skill and write it safely.

``skilleval +experiment=draft_evals skill=PATH [draft.n=20] [draft.drafter=auto|llm|offline]``

* ``auto`` uses the LLM drafter (`skilleval.evalsets.llm`) on a backend that writes prose
  and the offline baseline (`skilleval.evalsets.offline`) on one that does not (the stub
  says so with ``writes_prose = False``).
* Near-misses come from the skill's own "not for" clauses, the listed competitors
  (``distractors=[...]``) and the bundled distractor skills.
* The set goes to ``evals/trigger_eval.json`` when the skill has no eval set yet, else to
  ``evals/trigger_eval.draft.json``; ``draft.overwrite=true`` replaces the existing set
  (after a backup outside the skill folder). Coverage of the skill's clauses is printed and
  written beside the set's run outputs.
"""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from skilleval.domain import Skill
from skilleval.errors import BudgetExhausted, SkillevalError, UserError
from skilleval.evalsets.coverage import coverage
from skilleval.evalsets.evalset import backup, contained, existing_set, validate_rows, write_rows
from skilleval.evalsets.text import term

if TYPE_CHECKING:
    from skilleval.app import JobContext

DRAFT_NAME = "trigger_eval.draft.json"


class DraftBudgetStop(SkillevalError):
    """The budget ran out mid-draft: a partial set is not written (exit 4, budget stop)."""

    exit_code = 4
DRAFTERS = ("auto", "llm", "offline")


@dataclass(frozen=True)
class DraftSettings:
    n: int = 20
    positives: int = 10
    drafter: str = "auto"
    overwrite: bool = False
    max_attempts: int = 3

    @classmethod
    def from_cfg(cls, node: Any) -> "DraftSettings":
        from skilleval.app import checked_number

        node = node or {}
        n = checked_number("draft.n", node.get("n", 20), int)
        if n < 2:
            raise UserError(f"draft.n must be at least 2, got {n}")
        pos = node.get("positives")
        pos = n // 2 if pos is None else checked_number("draft.positives", pos, int)
        if not 1 <= pos < n:
            raise UserError(f"draft.positives must be between 1 and draft.n - 1 ({n - 1}), got {pos}")
        drafter = str(node.get("drafter", "auto"))
        if drafter not in DRAFTERS:
            raise UserError(f"draft.drafter must be one of {', '.join(DRAFTERS)}, got {drafter!r}")
        overwrite = node.get("overwrite", False)
        if not isinstance(overwrite, bool):
            raise UserError(f"draft.overwrite must be true or false, got {overwrite!r}")
        attempts = checked_number("draft.max_attempts", node.get("max_attempts", 3), int)
        if attempts < 1:
            raise UserError(f"draft.max_attempts must be at least 1, got {attempts}")
        return cls(n, pos, drafter, overwrite, attempts)


def _bundled(skill: Skill) -> bool:
    from importlib import resources

    root = Path(str(resources.files("skilleval.examples"))).resolve()
    return root in skill.path.resolve().parents


def target_path(skill: Skill, overwrite: bool, output_dir: Path) -> tuple[Path, Path | None]:
    """(where to write, the existing set it replaces or None). A bundled example is never
    written to (it may live in site-packages): its draft goes to the run's output folder."""
    if _bundled(skill):
        return output_dir / DRAFT_NAME, None
    existing = existing_set(skill.path)
    evals = skill.path / "evals"
    if existing is None:
        return contained(evals / "trigger_eval.json", skill.path), None
    if overwrite:
        if existing.suffix == ".jsonl":
            raise UserError(f"{existing}: draft.overwrite=true cannot replace a .jsonl set; "
                            "remove it or keep the draft")
        return contained(existing, skill.path), existing
    draft = contained(evals / DRAFT_NAME, skill.path)
    # an earlier draft may hold the user's edits (review-evals saves to it): backed up too
    return draft, (draft if draft.is_file() else None)


def competitors(job: "JobContext", skill: Skill) -> list[Skill]:
    """Listed competitors first, then the bundled distractors; one per name."""
    from skilleval.config import example_distractors
    from skilleval.skills import load_skill

    out: dict[str, Skill] = {}
    for s in [*job.load_distractors(), *(load_skill(p) for p in example_distractors())]:
        if s.name != skill.name:
            out.setdefault(s.name, s)
    return list(out.values())


def check_draft_inputs(job: "JobContext") -> tuple[DraftSettings, Skill, Path, Path | None]:
    """The settings, the skill, and where the draft goes (and the set it replaces); also the
    experiment's ``check_inputs``, so a bad ``draft.*`` value is refused (exit 2) before the
    run's row is stored."""
    settings = DraftSettings.from_cfg(job.cfg.get("draft"))
    skill = job.load_skill()
    return (settings, skill, *target_path(skill, settings.overwrite, job.output_dir))


def run_draft_evals(job: "JobContext") -> int:
    settings, skill, target, replaced = job.prepared or check_draft_inputs(job)
    comps = competitors(job, skill)
    drafter = settings.drafter
    if drafter == "auto":
        drafter = "llm" if getattr(job.backend, "writes_prose", True) else "offline"
    job.console.print(f"[bold]draft_evals[/bold] {term(skill.name)}: {settings.n} queries "
                      f"({settings.positives} should trigger), drafter {drafter}"
                      + (f" on {job.backend.name}/{escape(str(job.backend.model))}" if drafter == "llm" else
                         " (offline baseline: template phrasing, review before trusting it)"))
    notes: list[str] = []
    if drafter == "llm":
        from skilleval.evalsets.llm import draft_llm

        try:
            drafting = job.run(draft_llm(skill, comps, settings.n, settings.positives, job.backend,
                                         max_attempts=settings.max_attempts, budget=job.budget))
        except BudgetExhausted as exc:
            raise DraftBudgetStop(f"draft_evals stopped by the budget before the set was complete "
                                  f"({exc}); nothing was written") from None
        rows, notes = drafting.rows, drafting.notes
        job.summary.update(calls_made=drafting.calls, cost_usd=drafting.cost_usd)
        (job.output_dir / "draft_log.json").write_text(json.dumps(drafting.log, indent=2, ensure_ascii=False))
    else:
        from skilleval.evalsets.offline import draft_offline

        seed = int(job.cfg.get("seed") or 0)
        rows = draft_offline(skill, comps, settings.n, settings.positives, seed=seed)
        if len(rows) < settings.n:
            # the count found is no advice: fewer queries ask for another balance, which finds
            # fewer again (18 of 20, then 17 of 18); say the largest draft.n that is drafted whole
            explicit = (job.cfg.get("draft") or {}).get("positives") is not None

            def whole(n: int) -> bool:  # positives as DraftSettings gives them for draft.n=n
                pos = min(settings.positives, n - 1) if explicit else n // 2
                return len(draft_offline(skill, comps, n, pos, seed=seed)) >= n
            fits = next((n for n in range(len(rows), 1, -1) if whole(n)), None)
            advice = f"draft.n={fits} drafts a whole set" if fits else "no draft.n drafts a whole set"
            raise UserError(f"{skill.path}: the offline drafter found material for only {len(rows)} of "
                            f"{settings.n} queries; {advice}, or use an LLM backend")
    rows = validate_rows(rows, where="drafted set")
    saved = backup(replaced, skill.name) if replaced is not None else None
    write_rows(target, rows)
    cov = coverage(skill, rows)
    _print(job, skill, rows, target, saved, cov, notes)
    (job.output_dir / "draft_coverage.json").write_text(json.dumps(
        {"eval_set": str(target), "coverage": [c.to_dict() for c in cov]}, indent=2, ensure_ascii=False))
    job.summary.update(drafted=len(rows), eval_set=str(target), drafter=drafter,
                       uncovered=sum(1 for c in cov if not c.queries))
    return 0


def _print(job: "JobContext", skill: Skill, rows: list[dict[str, Any]], target: Path,
           saved: Path | None, cov: list[Any], notes: list[str]) -> None:
    pos = sum(r["should_trigger"] for r in rows)
    for note in notes:
        job.console.print(f"[dim]note: {term(note)}[/dim]")
    if saved is not None:
        job.console.print(f"backup of the replaced set: {term(str(saved))}")
    uncovered = [c for c in cov if not c.queries]
    if uncovered:
        table = Table("polarity", "clause with no query", title="coverage gaps", title_justify="left")
        for c in uncovered:
            table.add_row(c.clause.polarity, term(c.clause.text[:100]))
        job.console.print(table)
    job.console.print(f"coverage: {len(cov) - len(uncovered)}/{len(cov)} clauses of the description "
                      "and scope statements exercised")
    job.out.print(f"wrote {len(rows)} queries ({pos} should trigger, {len(rows) - pos} should not) to "
                  f"{term(str(target))}", soft_wrap=True)
    # one unbroken line: a command to copy, its paths quoted for the shell
    job.out.print(f"review: skilleval review-evals {term(shlex.quote(str(target)))} "
                  f"--skill {term(shlex.quote(str(skill.path)))}", soft_wrap=True)


run_draft_evals.reports = ()  # its own results and summary (reporting.applies)  # type: ignore[attr-defined]
run_draft_evals.check_inputs = check_draft_inputs  # type: ignore[attr-defined]


def draft_evals_factory(params: Any) -> Any:
    return run_draft_evals
