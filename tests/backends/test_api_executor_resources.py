"""The anthropic_api executor shows the model the user's real skill folder, resources included.

It used to hand the model only the SKILL.md body on load_skill: a skill saying "see
references/columns.md" or "run scripts/check.py" could not be followed through the API,
while the CLI had the whole folder. The arm's skills are now installed under
.claude/skills/<name> in the sandbox (as for the CLI), load_skill names that folder as
Claude Code's Skill tool does, and nothing there is ever an output. Driven through serve-sim
with the real SDK."""
from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from skilleval.backends.anthropic_api import AnthropicApiBackend
from skilleval.backends.api_executor import execute_via_api, run_tool
from skilleval.backends.params import AnthropicApiParams
from skilleval.execution import ArmSettings, ExecutionRequest, prepare_sandbox
from skilleval.functional.tasks import load_evals
from skilleval.skill_install import install_skills
from skilleval.skills import load_skill

REPO = Path(__file__).resolve().parents[2]
CSV_TIDY = REPO / "experiments" / "csv-tidy"


def _skill_with_resources(tmp: Path) -> Path:
    skill = tmp / "csv-tidy"
    shutil.copytree(CSV_TIDY, skill)
    (skill / "references").mkdir(exist_ok=True)
    (skill / "references" / "columns.md").write_text("Email columns are lower-cased.\n")
    (skill / "scripts").mkdir(exist_ok=True)
    (skill / "scripts" / "check.py").write_text("print('ok')\n")
    os.chmod(skill / "scripts" / "check.py", 0o755)
    return skill


def _request(tmp: Path, skill_root: Path) -> ExecutionRequest:
    _, cases = load_evals(CSV_TIDY / "evals" / "evals.json")
    case = cases[0]
    sandbox = tmp / "sandbox"
    files = prepare_sandbox(sandbox, CSV_TIDY, list(case.files))
    return ExecutionRequest("k-res", case.id, case.name, "with_skill", 0, case.prompt, sandbox,
                            ArmSettings(model="sim-1"), (load_skill(skill_root),), files)


def test_load_skill_names_the_installed_folder_and_its_resources_can_be_read(tmp_path: Path) -> None:
    req = _request(tmp_path, _skill_with_resources(tmp_path))
    install_skills(req.skills, req.sandbox)
    text, err = run_tool(req, "load_skill", {"name": "csv-tidy"})
    first, _, body = text.partition("\n\n")
    assert not err and first == "Base directory for this skill: .claude/skills/csv-tidy"
    assert body == req.skills[0].body
    text, err = run_tool(req, "read_file", {"path": ".claude/skills/csv-tidy/references/columns.md"})
    assert not err and text == "Email columns are lower-cased.\n"
    listed, _ = run_tool(req, "list_files", {"path": ".claude/skills/csv-tidy"})
    assert ".claude/skills/csv-tidy/scripts/check.py" in listed.splitlines()
    assert os.access(req.sandbox / ".claude/skills/csv-tidy/scripts/check.py", os.X_OK)
    root, _ = run_tool(req, "list_files", {"path": "."})  # the task's own files, as before
    assert not any(p.startswith(".claude/") for p in root.splitlines()) and root.strip()


def test_an_api_execution_installs_the_folder_and_never_counts_it_as_output(tmp_path: Path, sim) -> None:  # noqa: ANN001
    req = _request(tmp_path, _skill_with_resources(tmp_path))

    async def go():  # noqa: ANN202
        api = AnthropicApiBackend(AnthropicApiParams(base_url=sim.url, model="sim-1", max_retries=0))
        try:
            return await execute_via_api(api, req)
        finally:
            await api.aclose()
    result = asyncio.run(go())
    assert result.status == "ok", result.error
    assert (req.sandbox / ".claude/skills/csv-tidy/references/columns.md").is_file()
    assert (req.sandbox / ".claude/skills/csv-tidy/SKILL.md").read_bytes() == \
        (tmp_path / "csv-tidy" / "SKILL.md").read_bytes()  # the user's file, byte for byte
    assert result.outputs and not any(o.path.startswith(".claude/") for o in result.outputs)
