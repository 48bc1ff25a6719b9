"""Audit of the sweep summary's verdict: the best of K variants is picked after seeing the
data, so its test against the original is adjusted for the K it was picked from."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from scipy.stats import binomtest

from shared_helpers import CHANGELOG_VARIANTS

REPO = Path(__file__).resolve().parents[2]
VARIANTS = CHANGELOG_VARIANTS


def test_best_variant_p_value_is_adjusted_for_the_variants_it_was_picked_from(skilleval_cli, tmp_path: Path) -> None:  # noqa: ANN001
    skill = tmp_path / "changelog-writer"
    shutil.copytree(REPO / "experiments" / "changelog-writer", skill)
    vfile = tmp_path / "variants.yaml"
    vfile.write_text(json.dumps(VARIANTS))
    out = skilleval_cli.run("-m", "+experiment=trigger_eval", f"skill={skill}", f"variants={vfile}",
                            "variant=a,b,c,original", "progress=false", "trigger.runs=1", check=0)
    [summary_file] = list(skilleval_cli.outputs.rglob("sweep_summary.json"))
    [verdict] = json.loads(summary_file.read_text())["verdicts"]
    vs = verdict["versus_original"]
    assert verdict["best"] != "original" and vs["variants_compared"] == 3
    raw = binomtest(vs["b"], vs["b"] + vs["c"], 0.5).pvalue if vs["b"] + vs["c"] else 1.0
    assert vs["p_value"] == pytest.approx(raw, abs=1e-12)
    assert vs["p_adjusted"] == pytest.approx(min(1.0, 3 * raw), abs=1e-12)
    sig = "significant" if min(1.0, 3 * raw) < 0.05 else "not significant"
    assert f"Bonferroni over 3 variants p={vs['p_adjusted']:.3g} ({sig})" in out.stdout
