"""What an executor receives and returns, and the sandbox folder it works in.

An `ExecutionRequest` is one task run: one eval x one arm x one repeat. Its `key` is
content-addressed (backend identity + arm settings + skill content hash + eval + repeat), so a
rerun reads a finished execution from the store instead of paying for it again.

The sandbox is a fresh folder per execution. The eval's input `files` are copied in at their
paths relative to the skill root (``evals/files/in.csv``), an empty ``outputs/`` folder is
created, and the executor works with the sandbox as its current directory. Afterwards every
file that is new or changed is an *output*; its content is hashed and kept.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from skilleval.domain import Skill
from skilleval.errors import UserError
from skilleval.textfiles import shown_name

EXECUTOR_MARKER = "[[skilleval-executor]]"
"""Opens the system prompt of every API executor run (how serve-sim tells a task from a trial)."""

FILE_TOOLS = ("list_files", "read_file", "write_file", "load_skill")
"""The tools every arm of the API executor offers (the same in every arm: only skills differ)."""


@dataclass(frozen=True)
class ArmSettings:
    """The effective settings of one arm. Arms must be equal in everything but `skills`."""

    model: str
    tools: tuple[str, ...] = FILE_TOOLS
    permissions: str = "sandbox-write"
    system_prompt: str = ""
    max_turns: int = 20
    timeout_s: float = 600.0
    skills: tuple[tuple[str, str, str], ...] = ()  # (name, description, content hash) listed

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tools"] = list(self.tools)
        d["skills"] = [{"name": n, "description": desc, "hash": h} for n, desc, h in self.skills]
        return d

    def without_skills(self) -> dict[str, Any]:
        d = self.to_dict()
        d.pop("skills")
        return d


@dataclass(frozen=True)
class ExecutionRequest:
    """One task run. `sandbox` exists and holds the inputs when the executor is called."""

    key: str
    eval_id: str
    eval_name: str
    arm: str
    repeat: int
    prompt: str
    sandbox: Path
    settings: ArmSettings
    skills: tuple[Skill, ...] = ()  # skills installed in this arm (full SKILL.md bodies)
    input_files: tuple[str, ...] = ()  # sandbox-relative paths of the copied inputs

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def run_label(self) -> str:
        """Which run this is, for the model's prompt ("Run: ..."), so repeats differ: the
        arm's settings, the skills' content, the task and the repeat index. Not the execution
        key, which also holds the backend's identity and endpoint: a simulator seeded from it
        gave other outputs (so other grades) for the same command on each fresh serve-sim
        port."""
        blob = json.dumps({"settings": self.settings.to_dict(), "skills": [s.content_hash for s in self.skills],
                           "eval": self.eval_id, "prompt": self.prompt, "repeat": self.repeat},
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def max_turns(self) -> int:
        return self.settings.max_turns

    @property
    def timeout_s(self) -> float:
        return self.settings.timeout_s


@dataclass(frozen=True)
class OutputFile:
    path: str  # sandbox-relative, posix
    sha256: str
    size: int


@dataclass
class ExecutionResult:
    """What an executor reports. `status`: ok | error | timeout | turn_cap."""

    key: str
    status: str = "ok"
    transcript: str = ""
    outputs: tuple[OutputFile, ...] = ()
    duration_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    tool_calls: dict[str, int] = field(default_factory=dict)
    turns: int = 0
    errors: int = 0  # tool errors encountered during the run (skill-creator's errors_encountered)
    skill_fired: bool | None = None  # None when the arm listed no skill
    fired_skills: tuple[str, ...] = ()
    error: str | None = None
    effective_settings: dict[str, Any] | None = None  # as reported by the backend, if it can
    backend_version: str | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "turn_cap")


def execution_key(identity: dict[str, Any], settings: ArmSettings, skill_hashes: list[str],
                  eval_fingerprint: dict[str, Any], repeat: int) -> str:
    blob = json.dumps({"backend": identity, "settings": settings.to_dict(), "skills": skill_hashes,
                       "eval": eval_fingerprint, "repeat": repeat}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def sandbox_relative(rel: str) -> PurePosixPath:
    """`rel` as a relative POSIX path that stays inside its root on paper: not empty, not
    absolute (nor a drive), no ``..`` climbing above the root; PermissionError otherwise.
    Lexical only, so it can check a path before its folder exists (an eval set at load);
    symlinks are `resolve_inside`'s part, once the folder is there."""
    if not isinstance(rel, str) or not rel.strip():
        raise PermissionError("empty path")
    pure = PurePosixPath(rel.replace("\\", "/"))
    if pure.is_absolute() or (pure.parts and pure.parts[0].endswith(":")):
        raise PermissionError(f"absolute paths are not allowed: {rel}")
    depth = 0
    for part in pure.parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            raise PermissionError(f"path escapes the sandbox: {rel}")
    return pure


def resolve_inside(root: Path, rel: str) -> Path:
    """`root/rel`, refusing absolute paths and anything that escapes `root` (.., symlinks)."""
    pure = sandbox_relative(rel)
    root_r = root.resolve()
    target = (root_r / pure).resolve()
    if target != root_r and root_r not in target.parents:
        raise PermissionError(f"path escapes the sandbox: {rel}")
    return target


def input_file(skill_root: Path, rel: str, where: str = "") -> Path:
    """An eval's input file: a regular file inside the skill folder, else UserError (exit 2).
    A skill folder is hostile data: its evals.json may name ``../../.ssh/id_rsa``, which would
    be copied into the sandbox and sent to the model. ``where`` (the eval set and the eval)
    opens the message, so the user knows which entry to fix."""
    prefix = f"{where}: " if where else ""
    try:
        src = resolve_inside(skill_root, rel)
    except PermissionError as exc:
        raise UserError(f"{prefix}eval input file {rel!r} is outside the skill folder {skill_root} "
                        f"({exc})") from None
    if src.is_dir():  # it said "not found" of a folder that is there
        raise UserError(f"{prefix}eval input file {rel!r} is a folder: list the files in it")
    if not src.is_file():
        raise UserError(f"{prefix}eval input file not found: {skill_root / rel}")
    return src


def prepare_sandbox(sandbox: Path, skill_root: Path, files: list[str]) -> tuple[str, ...]:
    """Create a fresh sandbox with the input `files` (relative to `skill_root`) copied in."""
    if sandbox.exists():
        shutil.rmtree(sandbox)
    (sandbox / "outputs").mkdir(parents=True)
    copied = []
    for rel in files:
        src = input_file(skill_root, rel)
        dst = resolve_inside(sandbox, rel)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        copied.append(PurePosixPath(rel.replace("\\", "/")).as_posix())
    return tuple(copied)


def snapshot(sandbox: Path) -> dict[str, str]:
    """sandbox-relative path -> sha256 of every regular file (ignores `.claude/` config)."""
    out: dict[str, str] = {}
    for p in sorted(sandbox.rglob("*")):
        if p.is_file() and not p.is_symlink():
            rel = p.relative_to(sandbox).as_posix()
            if rel.startswith(".claude/") or rel.startswith(".skilleval/"):
                continue
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _utf8_name(sandbox: Path, rel: str) -> str:
    """An output whose name is not UTF-8 (its bytes reach Python as lone surrogates, which
    the store, JSON and every page refuse) is renamed, inside our own sandbox, to the same
    name with those bytes as ``\\xff`` escapes: recorded, exported and shown like any file."""
    try:
        rel.encode("utf-8")
        return rel
    except UnicodeEncodeError:
        pass
    shown = shown_name(rel)
    target = sandbox / shown
    if target.exists():  # never overwrite a file the model wrote
        stem = shown
        n = 1
        while (sandbox / f"{stem}.{n}").exists():
            n += 1
        shown, target = f"{stem}.{n}", sandbox / f"{stem}.{n}"
    target.parent.mkdir(parents=True, exist_ok=True)
    (sandbox / rel).rename(target)
    return shown


def collect_outputs(sandbox: Path, before: dict[str, str]) -> tuple[OutputFile, ...]:
    """Files that are new or changed since `before` (a `snapshot` taken after the inputs)."""
    after = snapshot(sandbox)
    out = []
    for rel, h in after.items():
        if before.get(rel) != h:
            rel = _utf8_name(sandbox, rel)
            out.append(OutputFile(rel, h, (sandbox / rel).stat().st_size))
    return tuple(out)


def store_blobs(sandbox: Path, outputs: tuple[OutputFile, ...], blob_root: Path) -> None:
    """Keep output contents by hash (so resumed runs can rebuild workspaces and compare)."""
    blob_root.mkdir(parents=True, exist_ok=True)
    for o in outputs:
        dst = blob_root / o.sha256[:2] / o.sha256
        if not dst.exists():
            dst.parent.mkdir(exist_ok=True)
            tmp = dst.with_suffix(".tmp")
            shutil.copyfile(sandbox / o.path, tmp)
            tmp.replace(dst)


def blob_path(blob_root: Path, sha256: str) -> Path:
    return blob_root / sha256[:2] / sha256


def output_rel(path: str) -> str:
    """Path of an output inside a workspace run's `outputs/` (drops a leading ``outputs/``)."""
    return path[len("outputs/"):] if path.startswith("outputs/") else path
