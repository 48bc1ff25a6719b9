"""Audit: the Runs page counts a functional run's executions and their errors, and a trigger run's trials taken from the cache.

The "trials" column read 0 for every functional run, so an errored execution (here one
HTTP 400 with retries off) was on no line of the Runs page or a sweep's grid."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.viewer.conftest import open_latest_report
from skilleval.sim.process import SimProcess
from skilleval.store.catalog import Store
from skilleval.viewer.api import Api


@pytest.fixture(scope="module")
def sim():  # noqa: ANN201
    with SimProcess() as s:
        yield s


def test_runs_page_counts_executions_and_errored_ones(skilleval_cli, sim, tmp_path: Path, page) -> None:  # noqa: ANN001
    sim.configure(fail_next=[400])
    skilleval_cli.run("+experiment=functional_eval", "functional.bootstrap=100", "functional.runs=2",
                      "functional.analyze=false", "backend=anthropic_api", f"backend.base_url={sim.url}",
                      "backend.max_retries=0", "functional.only=[2]", "functional.concurrency=1",
                      "progress=false", check=0, timeout=300)
    [row] = Api(Store(skilleval_cli.store)).get("/api/runs")["rows"]
    assert (row["executions"], row["execution_errors"]) == (4, 1)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", route="#/runs", wait_text="4 exec")
    assert "4 exec (1 err)" in pg.locator("main table tbody tr").first.inner_text()
    assert page.errors == []


def test_runs_page_counts_trials_taken_from_the_cache(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    """A rerun answered wholly from the store wrote no trial rows of its own: its line read
    "0" beside an accuracy over 20 queries, as if it had measured nothing."""
    for _ in range(2):
        skilleval_cli.run("+experiment=trigger_eval", "trigger.runs=1", "progress=false")
    rows = Api(Store(skilleval_cli.store)).get("/api/runs")["rows"]
    assert [(r["trials"], r["calls_cached"]) for r in rows] == [(0, 20), (20, 0)]
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", route="#/runs",
                            wait_text="20 from cache")
    assert "0 · 20 from cache" in pg.locator("main table tbody tr").first.inner_text()
    assert page.errors == []


def test_runs_page_says_how_many_queries_a_draft_wrote(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    """A draft_evals run makes no trials; its line read "0" where it had drafted 20 queries."""
    import shutil

    from tests.shared_helpers import REPO

    skill = tmp_path / "csv-tidy"
    shutil.copytree(REPO / "experiments" / "csv-tidy", skill)
    skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "progress=false")
    [row] = Api(Store(skilleval_cli.store)).get("/api/runs")["rows"]
    assert (row["trials"], row["work"]) == (0, "20 queries drafted")
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", route="#/runs",
                            wait_text="queries drafted")
    assert "20 queries drafted" in pg.locator("main table tbody tr").first.inner_text()
    assert page.errors == []
