"""Audit: a table output cut for the page says so.

CSV/TSV tables beyond 60 columns and XLSX sheets beyond 500 rows, 60 columns or 10 sheets
were cut without a word (the XLSX row cap said nothing, the CSV column cap said nothing):
a person read a partial table as the whole output."""
from __future__ import annotations

import json
from pathlib import Path

import openpyxl

from tests.viewer.conftest import open_latest_report
from skilleval.viewer.files import describe


def _outputs(d: Path) -> None:
    (d / "wide.csv").write_text("\n".join(",".join(f"c{j}" for j in range(70)) for _ in range(3)) + "\n")
    wb = openpyxl.Workbook()
    wb.active.title = "s0"
    for i in range(600):
        wb.active.append([i, "x"])
    for k in range(1, 12):
        wb.create_sheet(f"s{k}").append([k])
    wb.save(d / "book.xlsx")


def test_describe_says_what_it_cut(tmp_path: Path) -> None:
    _outputs(tmp_path)
    wide = describe(tmp_path / "wide.csv", "wide.csv", url=None, inline_binary=True)
    assert (wide["kind"], wide["more_rows"], wide["more_cols"]) == ("table", False, 10)
    book = describe(tmp_path / "book.xlsx", "book.xlsx", url=None, inline_binary=True)
    assert book["more_sheets"] == 2 and len(book["sheets"]) == 10
    assert book["sheets"][0]["more_rows"] is True and len(book["sheets"][0]["rows"]) == 500


def test_the_page_says_what_it_cut(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    run = tmp_path / "ws" / "iteration-1" / "eval-0-tables" / "with_skill" / "run-1"
    (run / "outputs").mkdir(parents=True)
    _outputs(run / "outputs")
    (run / "grading.json").write_text(json.dumps({"expectations": [{"text": "t", "passed": True, "evidence": ""}]}))
    skilleval_cli.run("import", str(tmp_path / "ws"), check=0)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", link="outputs", wait_text="sheet: s0")
    notes = pg.locator("main .truncated").all_inner_texts()
    # a static report embeds no text file: the note says where the whole file is, not "download"
    assert any(n.startswith("(10 more column(s) not shown: the whole file is in the run's output folder: ")
               and n.endswith("wide.csv)") for n in notes), notes
    folder = "the whole file is in the run's output folder: "
    assert any(n.startswith(f"(the first 500 rows only: {folder}") and n.endswith("book.xlsx)") for n in notes), notes
    assert any(n.startswith(f"(2 more sheet(s) not shown: {folder}") and n.endswith("book.xlsx)") for n in notes), notes
    assert page.errors == []
