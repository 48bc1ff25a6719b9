"""Issue 8 item 4: what Claude sees is the user's real skill folder, and Claude Code's listing
rules hold on every backend (real CLI 2.1.332 and the API backend, both against serve-sim)."""
from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from skilleval.backends.anthropic_api import AnthropicApiBackend
from skilleval.backends.claude_cli import ClaudeCliBackend, ClaudeCliParams
from skilleval.backends.params import AnthropicApiParams
from skilleval.domain import Trial
from skilleval.errors import HarnessError
from skilleval.skills import load_skill, split_frontmatter
from skilleval.trigger.selfcheck import self_check

pytestmark = pytest.mark.timeout(180)
REPO = Path(__file__).resolve().parents[2]

SKILL_MD = """---
name: report-tidy
description: Tidy quarterly sales reports in CSV, fixing dates and totals. Use when a user shares a sales report file.
license: MIT
allowed-tools: Read, Write
metadata:
  owner: finance-tools
when_to_use: Use when the user mentions quarterly figures.
---
# Report tidy

Read references/rules.md first.
"""


def _skill(tmp: Path, extra: str = "") -> Path:
    root = tmp / "report-tidy"
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD.replace("license: MIT\n", f"license: MIT\n{extra}"))
    (root / "references" / "rules.md").write_text("Dates are day-first.\n")
    return root


def _cli(sim, claude_bin: str, **kw) -> ClaudeCliBackend:  # noqa: ANN001
    return ClaudeCliBackend(ClaudeCliParams(executable=claude_bin, base_url=sim.url, model="sim-1",
                                            timeout_s=60.0, retry_base_s=0.05, **kw))


def test_cli_installs_the_users_folder_and_replaces_only_a_candidate_description(
        tmp_path: Path, sim, claude_bin: str) -> None:  # noqa: ANN001
    folder = _skill(tmp_path)
    skill = load_skill(folder)
    b = _cli(sim, claude_bin, work_root=str(tmp_path))
    trial = Trial("k", "c", "q", skill.name, (skill.listed,), 0, "sim-1", ((skill.name, skill.body),),
                  (skill,))
    root = b._project(trial)
    installed = root / "proj" / ".claude" / "skills" / "report-tidy"
    assert (installed / "SKILL.md").read_bytes() == (folder / "SKILL.md").read_bytes()
    assert (installed / "references" / "rules.md").read_text() == "Dates are day-first.\n"
    shutil.rmtree(root)
    candidate = skill.with_description("Clean up sales report CSVs.")
    trial = Trial("k", "c", "q", skill.name, (candidate.listed,), 0, "sim-1", (), (candidate,))
    root = b._project(trial)
    fm, body = split_frontmatter((installed_path := root / "proj/.claude/skills/report-tidy/SKILL.md")
                                 .read_text(), installed_path)
    original, _ = split_frontmatter(SKILL_MD, folder / "SKILL.md")
    assert fm == {**original, "description": "Clean up sales report CSVs."}
    assert body == skill.body and (installed_path.parent / "references" / "rules.md").is_file()
    shutil.rmtree(root)


def test_listing_appends_when_to_use_like_claude_code(tmp_path: Path) -> None:
    skill = load_skill(_skill(tmp_path))
    assert skill.listed.description.endswith(" - Use when the user mentions quarterly figures.")


def test_cli_self_check_fails_for_a_skill_claude_code_does_not_show(
        tmp_path: Path, sim, claude_bin: str) -> None:  # noqa: ANN001
    skill = load_skill(_skill(tmp_path, "disable-model-invocation: true\n"))
    with pytest.raises(HarnessError) as info:
        asyncio.run(self_check(_cli(sim, claude_bin), skill, []))
    text = str(info.value)
    assert info.value.exit_code == 3 and "disable-model-invocation" in text
    # measured, not only declared: the real CLI kept it out of the model's listing
    assert "was not in what the model was shown" in text and "triggered 'report-tidy' in 0/3" in text
    bodies = sim.http.get("/_sim/requests").json()
    assert bodies and not any("report-tidy:" in str(body.get("messages")) for body in bodies)


def test_api_self_check_fails_for_a_skill_claude_code_does_not_show(tmp_path: Path, sim) -> None:  # noqa: ANN001
    skill = load_skill(_skill(tmp_path, "disable-model-invocation: true\n"))
    api = AnthropicApiBackend(AnthropicApiParams(base_url=sim.url, model="sim-1", max_retries=0))
    with pytest.raises(HarnessError) as info:
        asyncio.run(self_check(api, skill, []))
    text = str(info.value)
    assert "was not in what the model was shown" in text and "triggered 'report-tidy' in 0/3" in text


def test_a_visible_skill_with_extra_frontmatter_passes_the_cli_self_check(
        tmp_path: Path, sim, claude_bin: str) -> None:  # noqa: ANN001
    skill = load_skill(_skill(tmp_path))
    asyncio.run(self_check(_cli(sim, claude_bin), skill, []))


def test_api_executor_lists_skills_by_claude_codes_rules(tmp_path: Path) -> None:
    from skilleval.backends.api_executor import system_prompt
    from skilleval.execution import ArmSettings, ExecutionRequest

    shown = load_skill(_skill(tmp_path / "a"))
    hidden = load_skill(_skill(tmp_path / "b", "disable-model-invocation: true\n"))
    req = ExecutionRequest("k" * 32, "1", "e", "with_skill", 0, "task", tmp_path, ArmSettings(model="sim-1"),
                           (shown,))
    assert "- report-tidy: Tidy quarterly" in system_prompt(req) and "quarterly figures." in system_prompt(req)
    req = ExecutionRequest("k" * 32, "1", "e", "with_skill", 0, "task", tmp_path, ArmSettings(model="sim-1"),
                           (hidden,))
    assert "report-tidy" not in system_prompt(req)


def test_a_skill_claude_code_does_not_list_is_refused_before_any_call(tmp_path: Path, skilleval_cli) -> None:  # noqa: ANN001
    """With the self-check off, or on the stub, such a skill measured recall 0 % (exit 0); with
    it on, six control calls were paid to learn what the frontmatter says."""
    import json

    skill = _skill(tmp_path, "disable-model-invocation: true\n")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"query": "tidy the quarterly report", "should_trigger": True},
                                 {"query": "write a poem", "should_trigger": False}]))
    r = skilleval_cli.run("+experiment=trigger_eval", f"skill={skill}", f"cases={cases}", "progress=false", check=3)
    assert "disable-model-invocation" in r.stderr and "before any call" in r.stderr, r.stderr
    assert not (skilleval_cli.store / "trials").exists()
