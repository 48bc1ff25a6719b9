"""Hydra set-up done before composition: resolvers and the plugin registry as config groups."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from omegaconf import OmegaConf

from skilleval.errors import UserError


def example_path(name: str) -> str:
    """`${example:NAME}`: the folder of a bundled example skill, wherever skilleval is installed."""
    root = resources.files("skilleval.examples")
    for candidate in (root / name, root / "distractors" / name):
        if candidate.is_dir():
            return str(Path(str(candidate)).resolve())
    raise UserError(f"no bundled example named {name!r}")


def example_distractors() -> list[str]:
    """`${example_distractors:}`: every bundled distractor skill folder."""
    root = Path(str(resources.files("skilleval.examples"))) / "distractors"
    return sorted(str(p.resolve()) for p in root.iterdir() if (p / "SKILL.md").is_file())


def example_competitors(skill: str | None) -> list[str]:
    """`${example_competitors:${skill}}`: a bundled example skill comes with the bundled
    distractors as its competitors (stand-ins for the document skills Claude Code lists by
    default); any other skill is listed alone unless `distractors=[...]` says otherwise."""
    if not skill:
        return []
    root = Path(str(resources.files("skilleval.examples"))).resolve()
    path = Path(skill).expanduser().resolve()
    if path == root or root not in path.parents or (root / "distractors") in (path, *path.parents):
        return []
    return example_distractors()


def is_bundled(skill_path: Path | str) -> bool:
    """True for a skill folder inside the bundled examples (``skilleval.examples``)."""
    root = Path(str(resources.files("skilleval.examples"))).resolve()
    path = Path(skill_path).expanduser().resolve()
    return root in path.parents


def example_note(skill_path: Path) -> str | None:
    """The note `experiments/notes.yaml` keeps for a bundled example skill, else None."""
    import yaml

    root = Path(str(resources.files("skilleval.examples"))).resolve()
    path = Path(skill_path).resolve()
    if path.parent != root:
        return None
    notes = root / "notes.yaml"
    if not notes.is_file():
        return None
    data = yaml.safe_load(notes.read_text(encoding="utf-8")) or {}
    note = data.get(path.name)
    return str(note) if note else None


_prepared = False


def prepare_hydra() -> None:
    global _prepared
    if _prepared:
        return
    from skilleval.registry import default_registry, publish_to_config_store

    OmegaConf.register_new_resolver("example", example_path, replace=True)
    OmegaConf.register_new_resolver("example_distractors", example_distractors, replace=True)
    OmegaConf.register_new_resolver("example_competitors", example_competitors, replace=True)
    publish_to_config_store(default_registry())
    _prepared = True
