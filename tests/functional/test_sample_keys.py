"""A functional eval through serve-sim gives the same grades every time it is run.

serve-sim answers a repeated identical prompt with its next sample, as a model sampling at a
temperature would. Two runs whose outputs are identical send identical grader prompts, so
with the server counting, which grade each run got depended on the order the requests
arrived in and on what the same server had answered before: the same command printed
+0.13 and then +0.07 (issue 8 item 1's figure was not reproducible). The grader, the
comparator and the analyzer now key their requests (``skilleval.sample_key``)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from skilleval import sample_key
from skilleval.backends.anthropic_api import AnthropicApiBackend
from skilleval.backends.claude_cli import ClaudeCliBackend
from skilleval.backends.params import AnthropicApiParams, ClaudeCliParams
from skilleval.functional.prompts import comparator_prompt
from skilleval.sim.process import SimProcess



@pytest.fixture(scope="module")
def sim():  # noqa: ANN201
    with SimProcess() as s:
        yield s


def _grades(out: Path) -> list[tuple]:
    b = json.loads(sorted(out.rglob("benchmark.json"))[-1].read_text())
    return sorted((r["configuration"], r["run_number"],
                   tuple(e["passed"] for e in r["expectations"])) for r in b["runs"])


def test_the_same_functional_eval_twice_on_one_server_gives_the_same_grades(skilleval_cli, tmp_path, sim) -> None:  # noqa: ANN001
    args = ("+experiment=functional_eval", "functional.runs=3", "functional.only=[2]",
            "functional.analyze=false", "functional.bootstrap=100", "backend=anthropic_api",
            f"backend.base_url={sim.url}", "backend.model=sim-1")
    grades = []
    for i in range(3):  # each in a fresh store: nothing cached, every grade asked again
        out = tmp_path / f"out{i}"
        skilleval_cli.run(*args, timeout=300, check=0,
                          env={"SKILLEVAL_STORE": str(tmp_path / f"store{i}"), "SKILLEVAL_OUTPUTS": str(out)})
        grades.append(_grades(out))
    assert len(grades[0]) == 6
    assert grades[1] == grades[0] and grades[2] == grades[0]
    # and on a fresh serve-sim (another port, so another endpoint in every execution key):
    # the simulated agent and the grader work from the run's label, not from the key
    with SimProcess() as other:
        out = tmp_path / "out-other"
        skilleval_cli.run(*[a.replace(sim.url, other.url) for a in args], timeout=300, check=0,
                          env={"SKILLEVAL_STORE": str(tmp_path / "store-other"), "SKILLEVAL_OUTPUTS": str(out)})
    assert _grades(out) == grades[0]


@pytest.mark.parametrize("backend", ["anthropic_api", "claude_cli"])
def test_a_keyed_completion_gets_its_answer_whatever_came_before(sim, backend, request) -> None:  # noqa: ANN001
    async def go() -> tuple[list[str], list[str], list[str]]:
        if backend == "claude_cli":
            api = ClaudeCliBackend(ClaudeCliParams(executable=request.getfixturevalue("claude_bin"),
                                                   base_url=sim.url, model="sim-1"))
        else:
            api = AnthropicApiBackend(AnthropicApiParams(base_url=sim.url, model="sim-1",
                                                         max_retries=0))
        # a comparator prompt: the simulated judge's scores vary from sample to sample
        prompt = comparator_prompt("Clean contacts.csv", ["The output keeps all 19 rows"],
                                   '<file path="a.csv">\nname,email\n</file>',
                                   '<file path="a.csv">\nname\n</file>')

        async def ask(key: str | None) -> str:
            if key is None:
                return (await api.complete(prompt, max_tokens=200)).text
            with sample_key.keyed(key):
                return (await api.complete(prompt, max_tokens=200)).text
        first = [await ask(k) for k in ("a", "b", "c")]
        unkeyed = [await ask(None) for _ in range(5)]  # the server's own count moves on
        again = list(await asyncio.gather(ask("c"), ask("a"), ask("b")))
        await api.aclose()
        return first, [again[1], again[2], again[0]], unkeyed
    first, again, unkeyed = asyncio.run(go())
    assert len(set(unkeyed)) > 1  # unkeyed, the same prompt still gets new samples
    assert again == first


def test_a_rerun_of_a_finished_functional_eval_pays_nothing(skilleval_cli, sim) -> None:  # noqa: ANN001
    """Every execution and grade of a rerun comes from the store; the analyzer's notes did
    not, and were the one call a rerun still paid."""
    cli = skilleval_cli
    args = ("+experiment=functional_eval", "functional.runs=1", "functional.only=[2]",
            "functional.bootstrap=100", "backend=anthropic_api", f"backend.base_url={sim.url}",
            "backend.model=sim-1")
    before = sim.stats().get("POST /v1/messages", 0)
    cli.run(*args, timeout=300, check=0)
    first_calls = sim.stats().get("POST /v1/messages", 0) - before
    cli.run(*args, timeout=300, check=0)
    assert sim.stats().get("POST /v1/messages", 0) - before == first_calls  # no request at all
    runs = json.loads(cli.run("sql", "select calls_made, summary_json from runs order by ts",
                              "--format", "json", check=0).stdout)
    assert [r["calls_made"] for r in runs][-1] == 0
    first, second = (sorted(cli.outputs.rglob("benchmark.json"))[i] for i in (0, -1))
    notes = [json.loads(p.read_text())["notes"] for p in (first, second)]
    analyzed = [n for n in notes[0] if n.startswith("analyzer: ")]
    assert analyzed and [n for n in notes[1] if n.startswith("analyzer: ")] == analyzed
    assert any("reused from an earlier run" in n for n in notes[1])
