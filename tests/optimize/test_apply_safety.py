"""Issue 8 item 12: `optimize.apply` must not make a skill worse, nor ship its backup."""
from __future__ import annotations

import shutil
from types import SimpleNamespace

from opt_helpers import EXAMPLE

from skilleval.optimize.apply import recommendation, refusal
from skilleval.optimize.selection import QueryOutcome
from skilleval.optimize.state import Entry, LoopState


def _state(best_decision: str = "accepted (+3/-0 vs incumbent, mcnemar mid-p p=0.06)") -> LoopState:
    o = [QueryOutcome("q1", True, 0, 3, False)]
    b = [QueryOutcome("q1", True, 3, 3, True)]
    st = LoopState("k", [Entry(0, 0, "Old.", "original", o, o, decision="original"),
                         Entry(1, 1, "New.", "stub", b, b, decision=best_decision)], incumbent=1)
    return st


def _test(*passed: bool | None) -> list[SimpleNamespace]:
    return [SimpleNamespace(passed=p, case=SimpleNamespace(id=f"t{i}")) for i, p in enumerate(passed)]


def test_a_description_that_lost_on_test_is_not_applied() -> None:
    # Seen: 2/3 on test for the original, 1/3 for the "best"; it was written anyway.
    why = refusal(_state(), {"original": _test(True, True, False), "best": _test(True, False, False)},
                  False)
    assert why is not None and "fewer test queries" in why and "1/3 vs 2/3" in why


def test_the_test_veto_compares_only_queries_measured_under_both() -> None:
    # an errored (insufficient) test query is no failure: 2/2 vs 2/3 with the third
    # unmeasured under the best is a tie over the two measured under both, not a loss
    assert refusal(_state(), {"original": _test(True, True, True), "best": _test(True, True, None)},
                   False) is None
    assert "measured under both" in refusal(
        _state(), {"original": _test(None, None), "best": _test(True, True)}, False)


def test_apply_needs_a_test_and_a_finished_one() -> None:
    assert "no test split" in refusal(_state(), {}, False)
    assert "budget" in refusal(_state(), {"original": _test(True), "best": _test(True)}, True)


def test_a_tie_or_a_win_on_test_is_applied() -> None:
    assert refusal(_state(), {"original": _test(True, False), "best": _test(True, False)}, False) is None
    assert refusal(_state(), {"original": _test(False, False), "best": _test(True, False)}, False) is None


def test_the_original_is_never_rewritten() -> None:
    st = _state()
    st.incumbent = 0
    assert "still the best" in refusal(st, {"original": _test(True), "best": _test(True)}, False)


def test_the_recommendation_is_the_best_unless_the_test_overrules_it() -> None:
    lost = {"original": _test(True, True, False), "best": _test(True, False, False)}
    rec = recommendation(_state(), lost, False)
    assert (rec["which"], rec["description"]) == ("original", "Old.") and "1/3 vs 2/3" in rec["reason"]
    rec = recommendation(_state(), {"original": _test(True, False), "best": _test(True, False)}, False)
    assert (rec["which"], rec["description"]) == ("best", "New.")
    st = _state()
    st.incumbent = 0
    assert recommendation(st, lost, False)["which"] == "original"
    for tests, partial in (({}, False), (lost, True)):  # unchecked: the best stands, said so
        rec = recommendation(_state(), tests, partial)
        assert rec["which"] == "best" and "NOT checked on test" in rec["reason"]


def test_apply_backup_goes_to_the_output_folder_not_the_skill(cli, tmp_path):
    skill = tmp_path / "changelog-writer"
    shutil.copytree(EXAMPLE, skill)
    before = (skill / "SKILL.md").read_text()
    out = cli.run("+experiment=trigger_opt", f"skill={skill}", "optimize.apply=true", "proposer=stub")
    assert out.returncode == 0, out.stderr
    assert not list(skill.rglob("SKILL.md.bak-*")), "a backup inside the skill would be packaged"
    res = cli.results()[-1]
    folder = next(cli.outputs.rglob("results.json")).parent
    backups = list(folder.glob("SKILL.md.bak-*"))
    rec = res["recommended"]  # results.json names the description apply writes
    if "wrote the best description" in out.stderr:
        assert rec["which"] == "best" and rec["description"] == res["best_description"]
        assert [p.read_text() for p in backups] == [before]
        assert res["best_test_score"] and res["original_test_score"]
    else:
        assert "SKILL.md unchanged" in out.stderr and (skill / "SKILL.md").read_text() == before
        assert rec["which"] == "original" and rec["description"] == res["original_description"]
    assert cli.run("validate", str(skill)).returncode == 0
    assert cli.run("package", str(skill), "-o", str(tmp_path / "pkg")).returncode == 0
    import zipfile

    [archive] = (tmp_path / "pkg").glob("*.skill")
    assert not [n for n in zipfile.ZipFile(archive).namelist() if ".bak-" in n]


def test_a_folder_named_unlike_the_skill_is_exit_2_before_any_call(cli, tmp_path):
    skill = tmp_path / "my-changelog"  # the skill inside is named changelog-writer
    shutil.copytree(EXAMPLE, skill)
    out = cli.run("+experiment=trigger_opt", f"skill={skill}", "optimize.apply=true", "proposer=stub")
    assert out.returncode == 2, out.stderr
    assert "does not match the folder name" in out.stderr and "Traceback" not in out.stderr
    assert not list((cli.store / "trials").rglob("*.parquet"))  # not one trial was paid for
