"""check-evals: planted problems named by entry, cross-split duplicates, never-discriminating
queries from a real store, the warnings before runs, and bad input."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "experiments" / "csv-tidy"

DISTINCT_POS = [
    "contacts_export.csv has Ann@x.com and ann@x.com twice, dedupe on email keep first",
    "the headers in leads.tsv have trailing spaces, normalise them to snake_case",
    "vendor file opens as JosÃ© GarcÃ­a in notepad, fix the encoding to utf-8",
    "orders_2024.csv won't load into postgres, extra data after column on line 212",
    "split full_name into first and last in customers.csv (keep 'de Vries' together)",
    "half the dates in signups.csv are 03/04/2024 and half 2024-04-03, make them ISO",
    "drop the blank lines and trim whitespace in every cell of team_list.csv",
    "merge city and state columns of stores.csv into one 'City, ST' column",
    "my export is a mess, 4k rows with semicolons and quotes everywhere, clean it",
    "fix delimiters in weekly_dump.txt so excel import reads pipes properly",
    "remove near-duplicate rows that only differ in case from members.csv",
    "convert mojibake in products.tsv from windows-1252, there are euro signs",
    "phone numbers in crm.csv look like +49 (0)89 123, normalise them",
]
NEG = [
    "build a pivot table of revenue by region in sales_q3.xlsx",
    "write a SQL query that dedupes the customers table in postgres",
    "plot monthly signups from signups.csv as a bar chart",
    "why is my pandas groupby so slow on 20M rows?",
    "extract the tables from invoice_march.pdf",
]


def planted_set(path: Path) -> list[dict]:
    rows = [{"query": q, "should_trigger": True} for q in DISTINCT_POS[:12]]
    rows.append({"query": "Contacts_export.CSV has Ann@x.com and ann@x.com twice -- dedupe on email, keep first!",
                 "should_trigger": True})                                                   # 12 ~ 0 (case/punct)
    rows.append({"query": "the headers in leads.tsv have trailing spaces, normalize them to snake case",
                 "should_trigger": True})                                                   # 13 ~ 1 (near)
    rows.append({"query": "use csv-tidy on the contacts file please", "should_trigger": True})  # 14 leaky
    rows += [{"query": q, "should_trigger": False} for q in NEG]                            # 15..19
    path.write_text(json.dumps(rows, indent=1))
    return rows


def test_planted_problems_are_named_by_entry(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    path = tmp_path / "planted.json"
    planted_set(path)
    proc = skilleval_cli.run("check-evals", str(path), "--skill", str(SKILL))
    out = " ".join(proc.stdout.split())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "duplicate: entry 0 and entry 12: duplicate (case/space/punctuation)" in out
    assert "near-duplicate: entry 1 and entry 13: near-duplicate" in out
    assert "leaky: entry 14 names the skill 'csv-tidy' outright" in out
    assert "balance: 15 should trigger / 5 should not (75% positive); the smaller class is under 40%" in out
    pairs = re.findall(r"entry (\d+) and entry (\d+):", out)
    assert sorted(pairs) == [("0", "12"), ("1", "13")]  # nothing else is flagged
    assert "power: 20 queries × 3 runs" in out
    assert re.search(r"coverage: \d+/\d+ clauses exercised", out)


def test_clean_set_passes_and_json_output(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    path = tmp_path / "clean.json"
    path.write_text(json.dumps([{"query": q, "should_trigger": True} for q in DISTINCT_POS[:5]]
                               + [{"query": q, "should_trigger": False} for q in NEG]))
    proc = skilleval_cli.run("check-evals", str(path), "--format", "json", check=0)
    data = json.loads(proc.stdout)
    assert [f["kind"] for f in data["findings"] if f["level"] == "warning"] == []
    assert data["power"]["queries"] == 10 and data["power"]["runs"] == 3


def test_cross_split_near_duplicates(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    rows = [{"query": q, "should_trigger": True, "split": s}
            for q, s in zip(DISTINCT_POS[:6], ["train", "train", "train", "validation", "test", "test"])]
    rows += [{"query": q, "should_trigger": False, "split": s}
             for q, s in zip(NEG, ["train", "train", "validation", "test", "test"])]
    rows.append({"query": DISTINCT_POS[0].replace("dedupe", "de-dupe"), "should_trigger": True, "split": "test"})
    path = tmp_path / "split.json"
    path.write_text(json.dumps(rows))
    proc = skilleval_cli.run("check-evals", str(path))
    out = " ".join(proc.stdout.split())
    assert "cross-split: entry 0 [train] and entry 11 [test] are near-duplicates across splits" in out
    # and trigger_opt warns about the same pair before it spends anything
    opt = skilleval_cli.run("+experiment=trigger_opt", f"skill={SKILL}", f"cases={path}", "splitter=fixed",
                            "proposer=stub", "optimize.max_iterations=1", "progress=false")
    assert opt.returncode == 0, opt.stderr[-2000:]
    err = " ".join(opt.stderr.split())
    assert "eval set warning cross-split: entry 0 (q000) [train] and entry 11 (q011) [test]" in err


def test_trigger_eval_warns_before_running(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    path = tmp_path / "planted.json"
    planted_set(path)
    proc = skilleval_cli.run("+experiment=trigger_eval", f"skill={SKILL}", f"cases={path}", "trigger.runs=1",
                             "progress=false")
    assert proc.returncode == 0, proc.stderr[-2000:]
    err = " ".join(proc.stderr.split())
    assert "eval set warning leaky: entry 14 (q014) names the skill" in err
    assert "eval set warning balance: 15 should trigger / 5 should not" in err
    assert err.index("eval set warning") < err.index("trigger_eval csv-tidy")


def test_never_discriminating_queries_from_stored_runs(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    skill = tmp_path / "csv-tidy"
    shutil.copytree(SKILL, skill)
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"query": q, "should_trigger": True} for q in DISTINCT_POS[:4]]
                                + [{"query": q, "should_trigger": False} for q in NEG[:4]]))
    passed: list[set[str]] = []
    md = (skill / "SKILL.md").read_text()
    for desc in (None, "Helps with files."):
        if desc:
            start = md.index("description:")
            end = md.index("\n", start)
            (skill / "SKILL.md").write_text(md[:start] + f"description: {desc}" + md[end:])
        skilleval_cli.run("+experiment=trigger_eval", f"skill={skill}", f"cases={cases}", "trigger.runs=2",
                          "progress=false", check=0)
        result = json.loads(skilleval_cli.results()[-1].read_text())
        passed.append({r["query"] for r in result["results"] if r["pass"]})
    always = passed[0] & passed[1]
    assert always and always != passed[0] | passed[1]  # some discriminate, some do not
    proc = skilleval_cli.run("check-evals", str(cases), "--skill", str(skill), "--store", str(skilleval_cli.store),
                             "--format", "json")
    found = {f["message"].split(": ", 1)[1].strip("'") for f in json.loads(proc.stdout)["findings"]
             if f["kind"] == "never-discriminates"}
    assert {q[:69] for q in always} == {m.rstrip("…")[:69] for m in found}
    # the author flips every label: verdicts follow the file's labels, not the stored ones
    entries = json.loads(cases.read_text())
    cases.write_text(json.dumps([{**e, "should_trigger": not e["should_trigger"]} for e in entries]))
    proc = skilleval_cli.run("check-evals", str(cases), "--skill", str(skill), "--store", str(skilleval_cli.store),
                             "--format", "json")
    found = {f["message"].split(": ", 1)[1].strip("'") for f in json.loads(proc.stdout)["findings"]
             if f["kind"] == "never-discriminates"}
    never_passed = {e["query"] for e in entries} - (passed[0] | passed[1])
    assert {q[:69] for q in never_passed} == {m.rstrip("…")[:69] for m in found}


def test_descriptions_on_different_models_are_not_compared(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    """A query's verdicts under two descriptions only say it cannot tell them apart when the same
    backend and model judged both: one description on model A and another on model B is a
    comparison of models as much as of descriptions, so it is not counted."""
    skill = tmp_path / "csv-tidy"
    shutil.copytree(SKILL, skill)
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"query": q, "should_trigger": True} for q in DISTINCT_POS[:4]]
                                + [{"query": q, "should_trigger": False} for q in NEG[:4]]))
    md = (skill / "SKILL.md").read_text()
    for desc, model in ((None, "sim-1"), ("Helps with files.", "sim-2")):
        if desc:
            start = md.index("description:")
            end = md.index("\n", start)
            (skill / "SKILL.md").write_text(md[:start] + f"description: {desc}" + md[end:])
        skilleval_cli.run("+experiment=trigger_eval", f"skill={skill}", f"cases={cases}", "trigger.runs=2",
                          f"backend.model={model}", "progress=false", check=0)
    proc = skilleval_cli.run("check-evals", str(cases), "--skill", str(skill), "--store", str(skilleval_cli.store),
                             "--format", "json")
    findings = json.loads(proc.stdout)["findings"]
    assert not [f for f in findings if f["kind"] == "never-discriminates"]
    store = [f["message"] for f in findings if f["kind"] == "store"]
    assert store and "one backend and model" in store[0], store


@pytest.mark.parametrize("args,words", [
    (["missing.json"], "eval set not found"),
    (["BAD", "--runs", "0"], "--runs must be 1-1000"),
    (["BAD", "--baseline", "1.5"], "--baseline must be in"),
])
def test_bad_input_exits_2_with_one_line(tmp_path: Path, skilleval_cli, args, words) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.json"
    bad.write_text('[{"query": "x", "should_trigger": "yes"}]')
    args = [str(bad) if a == "BAD" else a for a in args]
    proc = skilleval_cli.run("check-evals", *args)
    assert proc.returncode == 2 and words in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    proc = skilleval_cli.run("check-evals", str(bad))
    assert proc.returncode == 2 and "entry 0: 'should_trigger' must be true or false" in proc.stderr


def test_hostile_queries_cannot_drive_the_terminal(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    evil = "dedupe \x1b[2J\x1b[31mcontacts.csv [bold red]now[/bold red] \u202eplease"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps([{"query": evil, "should_trigger": True},
                                {"query": evil.upper(), "should_trigger": False}]))
    proc = skilleval_cli.run("check-evals", str(path))
    assert proc.returncode == 1
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout
    assert "[2J" in proc.stdout and "[bold red]now[/bold red]" in proc.stdout  # shown, inert
    assert "with opposite should_trigger labels" in proc.stdout


def test_warnings_before_a_run_are_capped(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    """150 near-identical queries give hundreds of pairs; the run's log shows a few and a count
    (a flood on stderr could fill a pipe nobody reads and stall the run)."""
    cases = tmp_path / "many.jsonl"
    cases.write_text("".join(json.dumps({"query": f"request {i}: please dedupe csv rows", "should_trigger": i % 2 == 0})
                             + "\n" for i in range(150)))
    proc = skilleval_cli.run("+experiment=trigger_eval", f"skill={SKILL}", f"cases={cases}", "trigger.runs=1",
                             "progress=false", check=0)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("eval set warning")]
    assert len(lines) == 9 and re.search(r"… and \d+ more \(\d+ near-duplicate\)", lines[-1])


def test_a_set_a_run_refuses_is_bad_input_here_too(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    """check-evals said clean (exit 0) of a set trigger_eval refuses: a blank query, two ids alike."""
    rows = [{"query": q, "should_trigger": True, "id": f"p{i}"} for i, q in enumerate(DISTINCT_POS[:5])]
    rows += [{"query": q, "should_trigger": False, "id": f"n{i}"} for i, q in enumerate(NEG)]
    for bad, words in (({"query": " "}, "'query' is empty"), ({"id": "p0"}, "duplicate id 'p0'")):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps([{**rows[0]}, {**rows[1], **bad}, *rows[2:]]))
        proc = skilleval_cli.run("check-evals", str(path), check=2)
        assert words in proc.stderr and "trigger_eval and trigger_opt refuse this set" in proc.stderr, proc.stderr


def test_a_high_baseline_needs_no_gain_the_user_never_set(skilleval_cli) -> None:  # noqa: ANN001
    """--baseline 0.95 alone was refused: '--gain must be in (0, 0.05], got 0.1' (the default)."""
    from skilleval.config import example_path

    proc = skilleval_cli.run("check-evals", example_path("csv-tidy"), "--baseline", "0.95")
    assert proc.returncode in (0, 1), proc.stderr
    assert "from 95%" in proc.stdout or "0.95" in proc.stdout, proc.stdout
