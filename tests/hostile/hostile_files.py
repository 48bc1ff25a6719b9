"""Hostile fixtures written as real files (a plain module: conftest.py is for fixtures)."""
from __future__ import annotations

import json
from pathlib import Path

ESC = "\x1b"
# Rich markup, a hyperlink to a local file, a screen clear, a window retitle, a bell, a bidi flip.
HOSTILE_TEXTS = ["close [/] the tag and [bold]shout[/bold]",
                 "[link=file:///etc/passwd]click me[/link] please",
                 f"clear the screen {ESC}[2J now",
                 f"retitle {ESC}]0;pwned\x07 the window",
                 "reverse \u202eevil\u202c text [/]evil",
                 "users like root:x:0:0 :warning: and :thumbs_up:"]  # rich's emoji codes
EMOJI = ("\u274c", "\u26a0", "\U0001f44d")  # what rich would make of :x: :warning: :thumbs_up:


def write_skill(root: Path, folder: str, name: str, description: str = "Tidy CSV files.",
                queries: list[tuple[str, bool]] | None = None) -> Path:
    d = root / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {json.dumps(name)}\ndescription: {json.dumps(description)}"
                                f"\n---\n# Skill\nDo the thing.\n", encoding="utf-8")
    if queries is not None:
        (d / "evals").mkdir(exist_ok=True)
        (d / "evals" / "trigger_eval.json").write_text(json.dumps(
            [{"query": q, "should_trigger": t} for q, t in queries]), encoding="utf-8")
    return d
