"""NaN and infinity are refused as settings (exit 2, one line, before any call).

NaN passes every range check (each comparison with it is False): ``backend.intercept=nan`` on
the embed backend made every probability NaN, nothing fired, and trigger_eval printed a recall
of 0 with exit 0; ``trigger.confidence=nan`` printed "nan% Wilson intervals" of [0%-100%].
"""
from __future__ import annotations

import pytest
from shared_helpers import one_line_error


@pytest.mark.parametrize("override", ["backend.intercept=nan", "backend.slope=inf"])
def test_embed_calibration_override_must_be_finite(skilleval_cli, override: str) -> None:
    r = skilleval_cli.run("+experiment=trigger_eval", "backend=embed", override, "progress=false",
                          check=None)
    line = one_line_error(r, 2)
    assert override.split("=")[0] in line and "finite" in line


@pytest.mark.parametrize("override", ["trigger.confidence=nan", "budget.max_usd=nan",
                                      "functional.confidence=nan", "attribute.bootstrap=inf"])
def test_shared_number_checks_refuse_nan(skilleval_cli, override: str) -> None:
    exp = "attribute" if override.startswith("attribute") else "trigger_eval"
    r = skilleval_cli.run(f"+experiment={exp}", override, "progress=false", check=None)
    assert override.split("=")[0] in one_line_error(r, 2)
