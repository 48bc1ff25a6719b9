"""``optimize.apply=true``: write the best description into SKILL.md, only when it is safe.

A description is written only when it (1) replaced the original through the loop's paired
test (train + validation, `selection.compare`) and (2) passed at least as many held-out
test queries as the original. Anything else keeps SKILL.md as it is and says why: a
description that won on validation and then lost on test is the over-fitting the split
exists to catch (issue 8 item 12: it once wrote a 1/3-on-test description over a 2/3 one).

The backup goes into the run's output folder, never into the skill folder (where
``package`` would ship it). Problems that would make the write fail (a folder name that
differs from the skill name, ...) are caught by `preflight` before the first call.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from skilleval.domain import Skill, TriggerCase
from skilleval.errors import HarnessError, UserError
from skilleval.optimize.selection import verdicts_under_both
from skilleval.skills import described_anew, skill_md_path, validate_skill, write_description
from skilleval.terminal import safe

if TYPE_CHECKING:
    from skilleval.app import JobContext
    from skilleval.optimize.state import LoopState


def preflight(job: "JobContext", skill: Skill) -> None:
    """Exit 2 before any call when the best description could not be written back validly
    and safely: the loop must start from SKILL.md's own description (with ``description=`` or
    a variant, a winner was never compared with it), and the backup (in the run's folder)
    must land outside the skill folder."""
    if job.sweep_id != job.run_id:  # a single run is its own sweep (app.run_job)
        raise UserError("optimize.apply=true in a sweep (-m): each job would write SKILL.md, so "
                        "the next job would start from the last one's winner (and parallel "
                        "launchers would race); sweep without apply, then run the chosen "
                        "settings once with optimize.apply=true")
    if job.variant is not None and job.variant.description is not None:
        what = "description=…" if job.variant.name == "description" else f"variant={job.variant.name}"
        raise UserError(f"optimize.apply=true with {what}: the loop would start from that "
                        "wording, not SKILL.md's, so no candidate would be compared with what "
                        "SKILL.md says; drop one of the two")
    folder = skill_md_path(skill.path).parent.resolve()
    from skilleval.config import is_bundled

    if is_bundled(folder):  # installed with skilleval: a rewrite would be lost on upgrade, and
        # the demo's note ("weak on purpose") would then describe a description it no longer has
        raise UserError(f"optimize.apply=true on the bundled example {skill.name} ({folder}): "
                        "copy the folder and pass skill=PATH to write to your own copy")
    out = job.output_dir.expanduser().resolve()
    if out == folder or folder in out.parents:
        raise UserError(f"optimize.apply=true: the run's folder {job.output_dir} is inside the "
                        f"skill folder {folder}, where SKILL.md's backup would be packaged with "
                        "the skill; choose hydra.run.dir elsewhere")
    md = skill_md_path(skill.path)
    errors = [p for p in validate_skill(skill.path) if p.level == "error"]
    if errors:
        raise UserError(f"optimize.apply=true: {errors[0].located(md)}; "
                        "fix it first (the optimised description could not be written back)")
    try:  # the description is replaced in place: a layout that does not allow it, said now
        described_anew(md.read_bytes().decode("utf-8"), skill.description + " (new)", md)
    except UserError as exc:
        raise UserError(f"optimize.apply=true: {exc}; write the frontmatter one key per line") from None


def preflight_split(job: "JobContext", cases: Sequence[TriggerCase]) -> None:
    """Exit 2 before any call when the split has no test queries: `refusal` would keep SKILL.md
    after the whole paid loop (the best is only written once the held-out test has checked it)."""
    from skilleval.optimize.split_checks import split_cases

    split = split_cases(job, cases)  # checked as the loop checks it (a plugin's too)
    if not split.test:
        raise UserError(f"optimize.apply=true: splitter={job.cfg.splitter.get('name')} leaves no test "
                        "queries, and a description is written only after the held-out test has "
                        "checked it; use splitter=stratified or holdout, or drop optimize.apply")


def refusal(state: "LoopState", tests: dict[str, Any], partial_test: bool) -> str | None:
    """Why the best description must not be written, or None when it may be."""
    best, orig = state.best, state.original
    if best is orig or best.description == orig.description:
        return "the original description is still the best"
    if not (best.decision or "").startswith("accepted"):  # pragma: no cover - loop invariant
        return "the best description did not win its paired test"
    if partial_test:
        return "the test evaluation was cut short by the budget, so the best was not checked on test"
    if not tests.get("original") or not tests.get("best"):
        return "there is no test split to check the best description on (splitter has no test)"
    return held_out_veto(tests)


def held_out_veto(tests: dict[str, Any]) -> str | None:
    """Why the held-out test overrules the loop's best, or None: it passed fewer test queries
    than the original (one comparison of two descriptions, not a search over candidates).
    ``tests`` holds both; the callers check that first."""
    both = verdicts_under_both(tests["best"], tests["original"])
    b, o = sum(x for x, _ in both), sum(y for _, y in both)
    if not both:
        return "no test query was measured under both descriptions (errors or timeouts)"
    if b < o:
        return (f"the best description passed fewer test queries than the original "
                f"({b}/{len(both)} vs {o}/{len(both)} measured under both): likely over-fitting")
    return None


def recommendation(state: "LoopState", tests: dict[str, Any], partial_test: bool) -> dict[str, Any]:
    """Which description the run recommends (``results.json["recommended"]``): the loop's
    best, unless it is the original or the held-out test overrules it (`held_out_veto`); then the
    original. Once the test has checked it, it is the description ``optimize.apply=true``
    writes, so what a reader deploys from results.json and what ``apply`` changes are one
    decision. Without a finished test (no test split, or the budget cut it short) the best
    stands unchecked and the reason says so; ``apply`` then writes nothing (`refusal`)."""
    best, orig = state.best, state.original
    if len(state.entries) == 1:
        which, why = "original", f"no candidate was evaluated ({state.exit_reason})"
    elif best is orig or best.description == orig.description:
        which, why = "original", "no candidate beat the original in a paired comparison"
    elif partial_test or not tests.get("original") or not tests.get("best"):
        which, why = "best", ("won its paired validation test; NOT checked on test ("
                              + ("the budget cut the test short)" if partial_test else "no test split)"))
    else:
        veto = held_out_veto(tests)
        which, why = ("original", veto) if veto else (
            "best", "won its paired validation test and passed at least as many test queries "
                    "as the original")
    return {"which": which, "description": orig.description if which == "original"
            else best.description, "reason": why}


def apply_best(job: "JobContext", skill: Skill, state: "LoopState", tests: dict[str, Any],
               partial_test: bool) -> dict[str, Any]:
    """Write the best description if `refusal` finds no reason not to; returns what was done."""
    md = skill_md_path(skill.path)
    why = refusal(state, tests, partial_test)
    if why is not None:
        job.console.print(f"optimize.apply: SKILL.md unchanged: {why}")
        return {"applied": False, "reason": why}
    description = state.best.description
    backup = write_description(skill.path, description, backup_dir=job.output_dir)
    errors = [p for p in validate_skill(skill.path) if p.level == "error"]
    if errors:  # restore: never leave a skill that fails validation behind
        md.write_bytes(backup.read_bytes())
        raise HarnessError(f"{md}: the new description failed validation ({errors[0].message}); "
                           f"SKILL.md restored from {backup}")
    job.console.print(f"optimize.apply: wrote the best description to {safe(md)} (backup: {safe(backup)})")
    return {"applied": True, "backup": str(backup)}
