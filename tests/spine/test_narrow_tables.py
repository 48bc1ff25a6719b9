"""README's `skilleval plugins` and `skilleval store stats && skilleval store compact`, read in
an 80-column terminal or piped (rich then assumes 80): no name or number may end in "…".
A newcomer saw "precision/recall/ac…", "train/validation/t…" and "candidat…" / "executio…"."""
from __future__ import annotations

import json


def test_plugins_table_keeps_every_name_and_word(skilleval_cli) -> None:  # noqa: ANN001
    r = skilleval_cli.run("plugins", env={"COLUMNS": "80"}, check=0)
    assert "…" not in r.stdout, r.stdout
    regs = json.loads(skilleval_cli.run("plugins", "--format", "json", check=0).stdout)
    for reg in regs:
        assert f" {reg['name']} " in r.stdout, reg["name"]
    folded = "".join(line.split("│")[-2].strip() for line in r.stdout.splitlines() if line.count("│") > 2)
    assert "precision/recall/accuracy" in folded


def test_store_tables_keep_view_names_and_counts(skilleval_cli) -> None:  # noqa: ANN001
    skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", check=0)
    views = {v["view"]: v for v in json.loads(skilleval_cli.run("store", "stats", "--format", "json",
                                                                check=0).stdout)}
    narrow = {"COLUMNS": "50"}
    stats = skilleval_cli.run("store", "stats", env=narrow, check=0).stdout
    compact = skilleval_cli.run("store", "compact", env=narrow, check=0).stdout
    for out in (stats, compact):
        assert "…" not in out, out
        for name in views:
            assert f"│ {name} " in out, (name, out)
    # a folded number is still all there: join each row's cells across its lines
    cells = "".join(line.split("│")[6] for line in stats.splitlines() if line.count("│") == 8)
    for v in views.values():
        assert f"{v['bytes']:,}" in cells.replace(" ", ""), (v, stats)
