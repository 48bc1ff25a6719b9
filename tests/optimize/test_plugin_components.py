"""A third-party splitter or proposer is checked by the core, not trusted: a split that
overlaps, drops cases, leaves train one class or is no Split is refused (exit 2, one line
naming the splitter); a proposer's invalid proposals are dropped and said, extra ones capped
at what was asked for, and one that raises or answers with the wrong types fails the loop
like a HarnessError (exit 3, one line), never with a traceback. Also: whether a proposer is
budgeted for calls is its own ``makes_calls``, not its name."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "experiments" / "changelog-writer"

PLUGIN = """
from dataclasses import dataclass
from skilleval import hookimpl
from skilleval.optimize.proposers import Proposal
from skilleval.optimize.splitters import Split

@dataclass
class ModeParams:
    mode: str = "ok"

class WalkSplitter:
    def __init__(self, params):
        self.mode = params.mode

    def split(self, cases):
        cases = tuple(cases)
        if self.mode == "badtype":
            return {"train": list(cases)}
        if self.mode == "overlap":
            return Split(cases, (), cases)
        if self.mode == "drop":
            return Split(cases[:4], (), cases[-4:])
        if self.mode == "onlypos":
            return Split(tuple(c for c in cases if c.should_trigger), (),
                         tuple(c for c in cases if not c.should_trigger))
        if self.mode == "crash":
            raise KeyError("walk")
        return Split(cases[1::2], (), cases[0::2])

class WalkProposer:
    name = "walk_prop"

    def __init__(self, params):
        self.mode = params.mode

    async def propose(self, request, *, backend, budget=None):
        if self.mode == "raise":
            raise RuntimeError("walk proposer exploded")
        if self.mode == "strings":
            return ["a plain string description"]
        if self.mode == "invalid":
            return [Proposal("Use for <changelogs> & release notes", self.name)]
        if self.mode == "toomany":
            return [Proposal(request.current_description + f" Variant {i}.", self.name)
                    for i in range(request.count + 5)]
        raise AssertionError(self.mode)

@hookimpl
def register_splitters(register):
    register("walk_split", WalkSplitter, params=ModeParams, help="modes")

@hookimpl
def register_proposers(register):
    register("walk_prop", WalkProposer, params=ModeParams, help="modes")
"""


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("walk") / "site"
    (site / "walk_opt").mkdir(parents=True)
    (site / "walk_opt" / "__init__.py").write_text(PLUGIN)
    info = site / "walk_opt-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: walk-opt\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[skilleval]\nwalk_opt = walk_opt\n")
    return {"PYTHONPATH": str(site)}


def _opt(cli, env, *args: str):  # noqa: ANN001, ANN202
    return cli.run("+experiment=trigger_opt", f"skill={EXAMPLE}", "progress=false", "trigger.runs=1",
                   "optimize.max_iterations=1", *args, env=env)


def _errors(r) -> list[str]:  # noqa: ANN001
    assert "Traceback" not in r.stderr, r.stderr
    return [ln for ln in r.stderr.splitlines() if ln.startswith("skilleval:")]


@pytest.mark.parametrize("mode, says", [
    ("badtype", "returned a dict, not a"),
    ("overlap", "in both train and test"),
    ("drop", "left 12 of 20 case(s) out"),
    ("onlypos", "train split has only should_trigger=true"),
    ("crash", "failed: KeyError"),
])
def test_a_bad_split_is_refused_naming_the_splitter(skilleval_cli, plugin_env, mode, says) -> None:  # noqa: ANN001
    r = _opt(skilleval_cli, plugin_env, "splitter=walk_split", f"splitter.mode={mode}", "proposer=stub")
    errors = _errors(r)
    assert r.returncode == 2 and len(errors) == 1, r.stdout + r.stderr
    assert "splitter=walk_split" in errors[0] and says in errors[0], errors


@pytest.mark.parametrize("mode, says", [("raise", "walk proposer exploded"),
                                        ("strings", "returned a str among its proposals")])
def test_a_failing_proposer_is_a_proposer_failure_not_a_traceback(skilleval_cli, plugin_env, mode, says) -> None:  # noqa: ANN001
    r = _opt(skilleval_cli, plugin_env, "proposer=walk_prop", f"proposer.mode={mode}")
    errors = _errors(r)
    assert r.returncode == 3 and len(errors) == 1, r.stdout + r.stderr
    assert "before any candidate was evaluated" in errors[0]
    assert "proposer failed" in r.stdout + r.stderr and says in r.stdout + r.stderr


def test_invalid_proposals_are_dropped_and_said(skilleval_cli, plugin_env) -> None:  # noqa: ANN001
    r = _opt(skilleval_cli, plugin_env, "proposer=walk_prop", "proposer.mode=invalid")
    assert "Traceback" not in r.stderr, r.stderr
    out = " ".join((r.stdout + r.stderr).split())
    assert "dropped 1 of 1 proposal(s): 1 invalid" in out and "'<' or '>'" in out, out
    doc = json.loads(skilleval_cli.results()[-1].read_text())
    assert not [h for h in doc["history"] if "<" in h["description"]]


def test_proposals_beyond_the_count_asked_for_are_not_evaluated(skilleval_cli, plugin_env) -> None:  # noqa: ANN001
    r = _opt(skilleval_cli, plugin_env, "proposer=walk_prop", "proposer.mode=toomany",
             "optimize.candidates=2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 beyond the 2 asked for" in " ".join((r.stdout + r.stderr).split())
    doc = json.loads(skilleval_cli.results()[-1].read_text())
    assert len([h for h in doc["history"] if h["iteration"] == 1]) == 2, doc["history"]


def test_proposer_calls_are_budgeted_by_makes_calls_not_by_name() -> None:
    from skilleval.optimize.plan import OptimizeSettings, make_plan
    from skilleval.optimize.proposers import StubProposer
    from skilleval.optimize.params import StubProposerParams
    from skilleval.optimize.splitters import Split

    @dataclass
    class Calls:
        name: str = "stub"  # a plugin's proposer may be called anything, "stub" too

    class Free:
        name = "mine"
        makes_calls = False

    split, opt = Split(()), OptimizeSettings(candidates=3)
    assert make_plan(split, 1, opt, Calls()).proposer_calls == 3
    assert make_plan(split, 1, opt, Free()).proposer_calls == 0
    assert make_plan(split, 1, opt, StubProposer(StubProposerParams())).proposer_calls == 0
