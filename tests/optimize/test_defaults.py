"""The shipped trigger_opt defaults (issue 8 item 9): one candidate a round, screened, and
three rounds of patience, as measured by benchmarks/optimizer_efficiency.py. The YAML that
users read and the dataclass the loop falls back on must say the same."""
from __future__ import annotations

from pathlib import Path

import yaml
from omegaconf import OmegaConf

from skilleval.optimize.plan import OptimizeSettings, screening

CONF = Path(__file__).resolve().parents[2] / "conf" / "optimize" / "default.yaml"


def test_shipped_defaults_are_one_screened_candidate_and_patience_three() -> None:
    shipped = yaml.safe_load(CONF.read_text(encoding="utf-8"))
    assert (shipped["candidates"], shipped["patience"], shipped["max_iterations"]) == (1, 3, 5)
    assert shipped["screen"] is True
    s = OptimizeSettings()
    assert (s.candidates, s.patience, s.max_iterations) == (1, 3, 5)
    assert screening(OptimizeSettings.from_cfg(OmegaConf.create(shipped)))  # a lone one too


def test_shipped_default_reconsiders_a_kept_original_at_alpha_0_2() -> None:
    """Adopted 2026-12-02 on development seeds (see the comment in default.yaml)."""
    shipped = yaml.safe_load(CONF.read_text(encoding="utf-8"))
    assert shipped["reconsider_alpha"] == 0.2 == OptimizeSettings().reconsider_alpha
    assert OptimizeSettings.from_cfg(OmegaConf.create({"reconsider_alpha": None})).reconsider_alpha is None
