"""`seed` and `trigger.catalog` are checked like every other number: exit 2, one line, before
any call. `seed=abc` used to crash draft_evals with a ValueError traceback (and be ignored
elsewhere); a negative catalog size was taken as "no filler skills"."""
from __future__ import annotations

import pytest
from shared_helpers import one_line_error


@pytest.mark.parametrize("args, key", [
    (("+experiment=draft_evals", "seed=abc"), "seed"),
    (("+experiment=trigger_eval", "seed=1.5"), "seed"),
    (("+experiment=trigger_eval", "trigger.catalog=-3"), "trigger.catalog"),
])
def test_bad_seed_or_catalog_is_one_line_exit_2(skilleval_cli, tmp_path, args, key) -> None:  # noqa: ANN001
    import shutil
    from pathlib import Path

    skill = tmp_path / "changelog-writer"
    shutil.copytree(Path(__file__).resolve().parents[2] / "experiments" / "changelog-writer", skill)
    r = skilleval_cli.run(*args, f"skill={skill}")  # a copy: draft_evals writes into the folder
    assert key in one_line_error(r, 2)
    assert not (skilleval_cli.store / "trials").exists()


def test_a_catalog_too_small_counts_every_filler_and_says_which_are_left_out() -> None:
    """With recipe-scaler among the skills the message said "has 23 filler skills" of 24."""
    import json
    from importlib import resources
    from pathlib import Path

    import pytest

    from skilleval.errors import UserError
    from skilleval.trigger.routing import catalog_skills

    path = Path(str(resources.files("skilleval.examples"))) / "routing" / "catalog.json"
    names = [e["name"] for e in json.loads(path.read_text(encoding="utf-8"))]
    with pytest.raises(UserError) as got:
        catalog_skills(1000, {names[0], "not-in-the-catalog"})
    assert str(got.value) == (f"trigger.catalog=1000: the bundled catalog has {len(names)} filler "
                              f"skills (1 left out: named like a skill given); at most {len(names) - 1} "
                              "can be added")
    assert len(catalog_skills(len(names) - 1, {names[0]})) == len(names) - 1
