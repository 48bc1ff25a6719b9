"""Output files cut for the page, and table layout with one huge unbroken token.

* A CSV cut by the 200,000-character text cap showed its last row with a value cut in half
  (``1`` for ``1000000000399``) and no word that rows were missing.
* In the static report a cut file said "download the file for all of it" beside a link
  reading "(not embedded)": it now says where the whole file is.
* ``overflow-wrap: anywhere`` on every grid cell let one 5,000-character query squeeze the
  other columns to a letter a line ("expe|cted", numbers broken mid-number).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilleval.viewer.files import TEXT_MAX, describe
from tests.viewer.conftest import open_latest_report

pytestmark = pytest.mark.timeout(300)

VALUE = 10 ** 12  # row i's last cell is VALUE + i: 13 digits, so half of one is visibly wrong


def cut_csv() -> str:
    """Rows of 500 characters; the cap's last character falls inside row 399's number."""
    text = "id,pad,value\n" + "".join(f"{i:04d},{'a' * 480},{VALUE + i}\n" for i in range(450))
    row_start = text.index("\n0399,") + 1
    assert row_start + 486 < TEXT_MAX < row_start + 499  # inside the 13 digits of row 399
    return text


def quoted_csv() -> str:
    """Rows whose middle cell is quoted and spans two lines; the cap falls in its second line."""
    def row(i: int, pad: int = 0) -> str:
        return f'{i:04d},"{"b" * (240 + pad)}\n{"b" * 239}",{VALUE + i}\n'
    head = "id,note,value\n"
    pad = next(p for p in range(502) if (TEXT_MAX - len(head) - len(row(0, p))) % 502 == 300)
    text = head + row(0, pad) + "".join(row(i) for i in range(1, 450))
    line_start = text.rindex("\n", 0, TEXT_MAX) + 1
    assert text[line_start - 2] != '"' and text[line_start:TEXT_MAX].strip("b") == ""  # in the quoted cell
    return text


def test_describe_drops_the_cut_row_and_says_rows_are_missing(tmp_path: Path) -> None:
    for name, text in (("cut.csv", cut_csv()), ("quoted.csv", quoted_csv())):
        (tmp_path / name).write_text(text, encoding="utf-8")
        d = describe(tmp_path / name, name, url=None, inline_binary=True)
        assert d["kind"] == "table" and d["truncated"] is True, d.get("note")
        assert d["more_rows"] is True, name
        body = d["rows"][1:]
        assert len(body) > 300
        for r in body:  # every row shown is a whole row of the file
            assert len(r) == 3 and r[2] == str(VALUE + int(r[0])), (name, r[0], r[2][:20])
    (tmp_path / "small.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    small = describe(tmp_path / "small.csv", "small.csv", url=None, inline_binary=True)
    assert small["rows"] == [["a", "b"], ["1", "2"]] and small["more_rows"] is False


# Words of header cells and number cells that the layout split over two lines, and header
# cells narrower than their longest word (measured on one line in the cell's own font).
BROKEN_WORDS = """(sel) => {
  const out = [];
  for (const cell of document.querySelectorAll(sel)) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    let node, widest = 0;
    while ((node = walker.nextNode())) {
      for (const m of node.data.matchAll(/\\S+/g)) {
        const r = document.createRange();
        r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        if ([...r.getClientRects()].filter((x) => x.width > 0).length > 1) out.push(m[0]);
        const probe = document.createElement("span");
        probe.style.cssText = "position:absolute;white-space:nowrap;font:" + getComputedStyle(cell).font;
        probe.textContent = m[0];
        document.body.append(probe);
        widest = Math.max(widest, probe.getBoundingClientRect().width);
        probe.remove();
      }
    }
    const cs = getComputedStyle(cell);
    const inner = cell.getBoundingClientRect().width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (inner + 0.5 < widest) out.push("narrow:" + cell.textContent.slice(0, 40));
  }
  return out;
}"""


def _file_block(pg: Any, name: str) -> Any:
    return pg.locator("main .file").filter(has=pg.locator(".fname span", has_text=name)).first


def test_static_report_cut_files_say_where_the_whole_file_is(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    run = tmp_path / "ws" / "iteration-1" / "eval-0-cut" / "with_skill" / "run-1"
    outputs = run / "outputs"
    outputs.mkdir(parents=True)
    (outputs / "cut.csv").write_text(cut_csv(), encoding="utf-8")
    (outputs / "big.txt").write_text("word " * 60_000, encoding="utf-8")
    (outputs / "wide.csv").write_text("id,expected_value,text\n1234567890123,42.125," + "q" * 5000 + "\n",
                                      encoding="utf-8")
    (run / "grading.json").write_text(json.dumps({"expectations": [{"text": "t", "passed": True, "evidence": ""}]}))
    skilleval_cli.run("import", str(tmp_path / "ws"), check=0)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", link="outputs", wait_text="cut.csv")

    cut = _file_block(pg, "cut.csv")
    last = [c.strip() for c in cut.locator("tbody tr").last.locator("td").all_inner_texts()]
    assert len(last) == 3 and last[2] == str(VALUE + int(last[0])), last[::2]
    for name in ("cut.csv", "big.txt"):
        block = _file_block(pg, name)
        note = " ".join(block.locator(".truncated").all_inner_texts())
        assert note, name  # a cut file says so under it
        assert "download" not in note, note  # there is no download in a static report
        assert "output folder" in note and str(outputs.resolve() / name) in note, note
    assert "rows only" in " ".join(cut.locator(".truncated").all_inner_texts())

    # the output table with a 5,000-character cell: its header and numbers stay whole
    wide = _file_block(pg, "wide.csv")
    wide.locator("table").scroll_into_view_if_needed()
    assert pg.evaluate(BROKEN_WORDS, "main .file table.grid th, main .file table.grid td:not(.long)") == []
    assert page.errors == [] and page.blocked == []


def test_trigger_table_keeps_words_whole_beside_a_huge_unbroken_query(skilleval_cli, tmp_path: Path, page) -> None:  # noqa: ANN001
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"query": "Q" * 5000, "should_trigger": True},
                                 {"query": "write release notes for v1.4.0", "should_trigger": True},
                                 {"query": "what is the weather in Paris", "should_trigger": False}]))
    skilleval_cli.run("+experiment=trigger_eval", f"cases={cases}", "trigger.runs=1", check=0)
    pg = open_latest_report(page, skilleval_cli, tmp_path / "r.html", wait_text="Per query")
    pg.locator("table.queries tbody tr").nth(2).wait_for(timeout=10_000)
    assert pg.evaluate(BROKEN_WORDS, "table.queries th, table.queries td.num") == []
    # the long query still wraps inside the page instead of widening the table past it
    width = pg.evaluate("() => document.documentElement.clientWidth")
    box = pg.locator("table.queries").bounding_box()
    assert box and box["x"] + box["width"] <= width + 1, (box, width)
    assert page.errors == [] and page.blocked == []
