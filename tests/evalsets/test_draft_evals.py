"""draft_evals: the acceptance run on the stub, the write rules, the LLM drafter's strict
parsing and re-asks, serve-sim, and skill-creator compatibility."""
from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from skilleval.domain import Completion
from skilleval.evalsets.llm import draft_llm, parse_answer
from skilleval.evalsets.similar import normalise, similar_pairs
from skilleval.skills import load_skill

REPO = Path(__file__).resolve().parents[2]


def fresh_skill(root: Path, name: str = "csv-tidy") -> Path:
    """A copy of a bundled example *outside* experiments/ and without its evals folder."""
    dest = root / "skills" / f"my-{name}"
    shutil.copytree(REPO / "experiments" / name, dest)
    shutil.rmtree(dest / "evals")
    return dest


def flat(text: str) -> str:
    return " ".join(text.replace("`", "").replace("*", "").split()).casefold()


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory, make_skilleval_cli):  # noqa: ANN001, ANN201
    root = tmp_path_factory.mktemp("draft")
    cli = make_skilleval_cli(root)
    skill = fresh_skill(root)
    proc = cli.run("+experiment=draft_evals", f"skill={skill}", "progress=false", check=0)
    return cli, skill, proc


def test_draft_on_stub_writes_20_balanced_unique_queries(drafted) -> None:  # noqa: ANN001
    cli, skill, proc = drafted
    path = skill / "evals" / "trigger_eval.json"
    assert f"wrote 20 queries (10 should trigger, 10 should not) to {path}" in " ".join(proc.stdout.split())
    rows = json.loads(path.read_text())
    assert len(rows) == 20 and sum(r["should_trigger"] for r in rows) == 10
    assert len({normalise(r["query"]) for r in rows}) == 20
    assert similar_pairs([r["query"] for r in rows]) == []
    text = flat(load_skill(skill).description + "\n" + load_skill(skill).body)
    for r in rows:
        assert r["rationale"] and r["span"], r
        assert flat(r["span"]) in text, r["span"]  # the span is SKILL.md's own sentence
        assert "csv-tidy" not in r["query"].lower()
    sources = {r["source"] for r in rows if not r["should_trigger"]}
    assert "not-for" in sources and any(s.startswith("competitor:") for s in sources)
    assert "offline baseline" in " ".join(proc.stderr.split())
    assert "coverage:" in proc.stderr


def test_trigger_eval_runs_on_the_draft_unchanged(drafted) -> None:  # noqa: ANN001
    cli, skill, _ = drafted
    before = (skill / "evals" / "trigger_eval.json").read_bytes()
    cli.run("+experiment=trigger_eval", f"skill={skill}", "trigger.runs=1", "progress=false", check=0)
    result = json.loads(cli.results()[-1].read_text())
    assert len(result["results"]) == 20
    assert (skill / "evals" / "trigger_eval.json").read_bytes() == before


def test_existing_set_is_never_overwritten_without_the_flag(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    skill = fresh_skill(tmp_path)
    (skill / "evals").mkdir()
    mine = skill / "evals" / "trigger_eval.json"
    mine.write_text('[{"query": "my own query", "should_trigger": true}]\n')
    skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "progress=false", check=0)
    assert mine.read_text() == '[{"query": "my own query", "should_trigger": true}]\n'
    assert len(json.loads((skill / "evals" / "trigger_eval.draft.json").read_text())) == 20
    skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "draft.overwrite=true",
                      "draft.n=8", "progress=false", check=0)
    assert len(json.loads(mine.read_text())) == 8
    backups = list((skilleval_cli.store / "_backups").rglob("*trigger_eval.json"))
    assert len(backups) == 1 and "my own query" in backups[0].read_text()
    assert skill not in backups[0].parents
    # a second draft replaced the first, and the edits review-evals saved to it, with no backup
    draft = skill / "evals" / "trigger_eval.draft.json"
    draft.write_text('[{"query": "MY EDIT", "should_trigger": true}]\n')
    skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "progress=false", check=0)
    kept = list((skilleval_cli.store / "_backups").rglob("*trigger_eval.draft.json"))
    assert len(kept) == 1 and "MY EDIT" in kept[0].read_text(), kept


def test_skill_creators_file_name_is_read_and_not_shadowed(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    skill = fresh_skill(tmp_path)
    (skill / "evals").mkdir()
    theirs = skill / "evals" / "trigger_evals.json"
    shutil.copy(REPO / "experiments/csv-tidy/evals/trigger_eval.json", theirs)
    skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "draft.n=6", "progress=false", check=0)
    assert not (skill / "evals" / "trigger_eval.json").exists()  # would shadow trigger_evals.json
    assert (skill / "evals" / "trigger_eval.draft.json").is_file()
    proc = skilleval_cli.run("check-evals", str(skill))
    assert "trigger_evals.json: 20 queries" in " ".join(proc.stdout.split())


def test_draft_loads_unchanged_in_skill_creator_format(drafted) -> None:  # noqa: ANN001
    """run_eval.py reads a bare JSON array and only item["query"] / item["should_trigger"]
    (reference §3.2); everything else must be extra keys it ignores."""
    _, skill, _ = drafted
    data = json.loads((skill / "evals" / "trigger_eval.json").read_text())
    assert isinstance(data, list)
    pairs = [(item["query"], item["should_trigger"]) for item in data]
    assert all(isinstance(q, str) and isinstance(s, bool) for q, s in pairs)
    assert len({q for q, _ in pairs}) == len(pairs)  # run_eval keys results by query text
    for item in data:
        assert list(item)[:2] == ["query", "should_trigger"]
        assert set(item) <= {"query", "should_trigger", "id", "rationale", "span", "source"}


def test_bad_draft_settings_exit_2_with_one_line(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    skill = fresh_skill(tmp_path)
    for override, words in (("draft.n=abc", "draft.n must be a whole number"),
                            ("draft.drafter=magic", "draft.drafter must be one of"),
                            ("draft.positives=20", "draft.positives must be between")):
        proc = skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", override)
        assert proc.returncode == 2, proc.stderr
        assert words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert "Traceback" not in proc.stderr
    assert not (skill / "evals").exists()


class ScriptedBackend:
    """A real `Backend.complete` implementation that answers from a script (like httpx's
    MockTransport): chatty prose first, then an array with a leaky and a duplicate item."""

    name, model = "scripted", "scripted-1"

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.prompts: list[str] = []

    async def complete(self, prompt: str, *, system: str | None = None, max_tokens: int = 2048) -> Completion:
        self.prompts.append(prompt)
        return Completion(self.answers[len(self.prompts) - 1])


def test_llm_drafter_refuses_prose_and_bad_items_and_reasks() -> None:
    skill = load_skill(REPO / "experiments/csv-tidy")
    span = "Drop fully blank rows (all fields empty after trimming)."
    texts = ("dedupe contacts.csv by email please", "the vendor tsv shows JosÃ© instead of José, fix it",
             "make a pivot table of revenue by region in sales.xlsx")
    good = [{"query": t, "should_trigger": i < 2, "rationale": "r", "span": span}
            for i, t in enumerate(texts)]
    answers = [
        "Sure! Here you go:\n" + json.dumps(good),
        json.dumps([*good[:2], {"query": "run csv-tidy on leads.csv", "should_trigger": True,
                                "rationale": "r", "span": span},
                    {"query": "Dedupe contacts csv by EMAIL, please!", "should_trigger": True,
                     "rationale": "r", "span": "not a sentence of the skill"}]),
        "```json\n" + json.dumps([good[2], {"query": "tidy up the headers in leads.csv please",
                                             "should_trigger": True, "rationale": "r", "span": "made up"}]) + "\n```",
    ]
    backend = ScriptedBackend(answers)
    result = asyncio.run(draft_llm(skill, [], 4, 3, backend, max_attempts=3))
    assert result.calls == 3
    log = result.log
    assert "not a JSON array" in log[0]["problems"][0]
    assert any("names the skill" in p for p in log[1]["problems"])
    assert any("duplicates an accepted query" in p for p in log[1]["problems"])
    assert "names the skill" in backend.prompts[2]  # the re-ask states the problems
    assert [r["query"] for r in result.rows] == [*texts[:2], "tidy up the headers in leads.csv please",
                                                 texts[2]]
    assert result.rows[2]["span"] != "made up" and result.notes  # re-matched, and said so


def test_llm_drafter_gives_up_with_a_harness_error() -> None:
    from skilleval.errors import HarnessError

    skill = load_skill(REPO / "experiments/csv-tidy")
    with pytest.raises(HarnessError, match="0/4 usable queries after 2 requests"):
        asyncio.run(draft_llm(skill, [], 4, 2, ScriptedBackend(["nope", "[1, 2]"]), max_attempts=2))
    with pytest.raises(ValueError):
        parse_answer("here: [1]")


def test_llm_drafter_against_serve_sim(tmp_path: Path, skilleval_cli, sim) -> None:  # noqa: ANN001
    """A real backend (the anthropic SDK against serve-sim): auto picks the LLM drafter."""
    skill = fresh_skill(tmp_path, "changelog-writer")
    proc = skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "backend=anthropic_api",
                             f"backend.base_url={sim.url}", "backend.model=sim-1", "draft.n=10",
                             "progress=false", env={"ANTHROPIC_API_KEY": "sk-ant-test-0000"}, check=0)
    assert "drafter llm on anthropic_api" in " ".join(proc.stderr.split())
    rows = json.loads((skill / "evals" / "trigger_eval.json").read_text())
    assert len(rows) == 10 and sum(r["should_trigger"] for r in rows) == 5
    assert {r["source"] for r in rows} == {"llm"}
    log = json.loads(next(skilleval_cli.outputs.rglob("draft_log.json")).read_text())
    assert log and "draft-trigger-evals" in log[0]["prompt"]  # the model answered our prompt


def test_budget_stop_writes_nothing_and_exits_4(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    skill = fresh_skill(tmp_path)
    proc = skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "draft.drafter=llm",
                             "budget.max_calls=0", "progress=false")
    assert proc.returncode == 4 and "stopped by the budget" in proc.stderr
    assert "nothing was written" in proc.stderr and not (skill / "evals").exists()


def test_offline_draft_has_no_positive_that_only_names_the_skill(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    """The body's only heading is the skill's name ("# Haiku writer"): with the name taken out
    (a query naming the skill leaks), the heading left "this", and the drafter wrote
    should-trigger queries with nothing to trigger on ("Could you help me with this? this.")."""
    from skilleval.evalsets.text import content_stems

    skill = tmp_path / "haiku-writer"
    skill.mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: haiku-writer\ndescription: Writes haiku about any topic. Use when the user asks "
        "for a haiku or a short poem.\n---\n# Haiku writer\n\nWrite three lines, 5-7-5 syllables. "
        "Save the poem to outputs/haiku.txt and count the syllables of every line.\n")
    skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "progress=false")
    rows = json.loads((skill / "evals" / "trigger_eval.json").read_text())
    for r in rows:
        if r["should_trigger"]:
            span_words = content_stems(r["span"]) - content_stems("haiku writer")
            assert span_words, r  # the query was built from something the skill does


def test_review_hint_is_one_copyable_command(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    """The hint after a draft was wrapped at 80 columns mid-path and left paths unquoted."""
    import shlex

    skill = tmp_path / "my skills" / "csv-tidy"
    shutil.copytree(REPO / "experiments" / "csv-tidy", skill)
    r = skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", env={"COLUMNS": "80"}, check=0)
    [line] = [ln for ln in r.stdout.splitlines() if ln.startswith("review: ")]
    words = shlex.split(line[len("review: "):])
    assert words[:2] == ["skilleval", "review-evals"] and words[3] == "--skill", words
    assert Path(words[2]).is_file() and Path(words[4]) == skill, words


def test_too_little_material_names_a_draft_n_that_works(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    """The refusal gave the count found ("18 of 20"); lowering draft.n to it asked for another
    balance, which found fewer again ("17 of 18"). It now names a draft.n that drafts whole."""
    import re

    skill = tmp_path / "one"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: one\ndescription: Converts CSV files to JSON.\n---\nB\n")
    r = skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "progress=false", check=2)
    m = re.search(r"draft\.n=(\d+) drafts a whole set", r.stderr)
    assert m, r.stderr
    skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", f"draft.n={m.group(1)}",
                      "progress=false", check=0)
    assert len(json.loads((skill / "evals" / "trigger_eval.json").read_text())) == int(m.group(1))


def test_the_same_draft_twice_on_one_server_is_the_same(tmp_path: Path, skilleval_cli, sim) -> None:  # noqa: ANN001
    """serve-sim answers a repeated identical prompt with its next sample; the drafter's
    requests were not keyed (``skilleval.sample_key``), so the same command on one server
    drafted other queries the second time. They are keyed by attempt now."""
    drafts = []
    for name in ("a", "b"):
        skill = fresh_skill(tmp_path / name, "changelog-writer")
        skilleval_cli.run("+experiment=draft_evals", f"skill={skill}", "backend=anthropic_api",
                          f"backend.base_url={sim.url}", "backend.model=sim-1", "draft.n=10",
                          "progress=false", env={"ANTHROPIC_API_KEY": "sk-ant-test-0000"}, check=0)
        drafts.append(json.loads((skill / "evals" / "trigger_eval.json").read_text()))
    assert len(drafts[0]) == 10 and drafts[0] == drafts[1]
