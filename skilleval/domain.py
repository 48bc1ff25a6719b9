"""The nouns of skilleval (DESIGN §2) as frozen dataclasses.

Everything that crosses a module boundary is one of these: backends receive a `Trial` and
answer a `TrialResult`; the runner groups results per `TriggerCase`; the store flattens
them into Parquet rows. Keeping them frozen makes them safe to share between coroutines
and to use as cache keys.
"""
from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class Outcome(str, enum.Enum):
    """What one trial produced. Errors and timeouts are never folded into NOT_TRIGGERED."""

    TRIGGERED = "triggered"
    NOT_TRIGGERED = "not_triggered"
    ERROR = "error"
    TIMEOUT = "timeout"

    @property
    def valid(self) -> bool:
        """True when the trial measured something (the model decided)."""
        return self in (Outcome.TRIGGERED, Outcome.NOT_TRIGGERED)


@dataclass(frozen=True)
class ListedSkill:
    """A skill as the model sees it in the listing: name and description only."""

    name: str
    description: str


@dataclass(frozen=True)
class Skill:
    """A parsed skill folder."""

    name: str
    description: str
    body: str
    path: Path
    frontmatter: dict[str, Any] = field(hash=False, compare=False)
    #: Hash of the skill's other files (scripts/, references/, assets/), which an agent that
    #: loaded the skill may read; "" when there are none.
    resources_hash: str = ""

    @property
    def listed(self) -> ListedSkill:
        """The skill's line in the model's listing, as Claude Code renders it: the
        description, then ``when_to_use`` (appended as `` - <when_to_use>``)."""
        when = self.frontmatter.get("when_to_use")
        if isinstance(when, str) and when.strip():
            return ListedSkill(self.name, f"{self.description} - {when.strip()}")
        return ListedSkill(self.name, self.description)

    @property
    def model_invocable(self) -> bool:
        """False when Claude Code keeps the skill out of the model's listing
        (``disable-model-invocation: true``): the model can never trigger it."""
        flag = self.frontmatter.get("disable-model-invocation")
        return not (flag is True or (isinstance(flag, str) and flag.strip().lower() == "true"))

    @property
    def install_extras(self) -> str:
        """What installing the real folder shows beyond name, description and body: the other
        frontmatter keys and the resource files (part of trial keys; "" when there are none)."""
        extra = {k: v for k, v in self.frontmatter.items() if k not in ("name", "description")}
        if not extra and not self.resources_hash:
            return ""
        return json.dumps([extra, self.resources_hash], sort_keys=True, default=str, ensure_ascii=False)

    @property
    def content_hash(self) -> str:
        """Hash of what a backend could be shown: name, description, body and resources."""
        blob = json.dumps([self.name, self.description, self.body, self.resources_hash],
                          ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def with_description(self, description: str) -> "Skill":
        fm = dict(self.frontmatter)
        fm["description"] = description
        return Skill(self.name, description, self.body, self.path, fm, self.resources_hash)


@dataclass(frozen=True)
class TriggerCase:
    """One query of a trigger eval set."""

    id: str
    query: str
    should_trigger: bool
    split: str | None = None


@dataclass(frozen=True)
class Trial:
    """One request to a backend: does `target` fire for `query` given the `listing`?

    `key` is content-addressed (see `skilleval.store.keys`): the same trial asked twice is
    read from the store instead of being paid for again.
    """

    key: str
    case_id: str
    query: str
    target: str
    listing: tuple[ListedSkill, ...]
    repeat: int
    model: str
    bodies: tuple[tuple[str, str], ...] = ()  # (skill name, SKILL.md body) for real installs
    #: The skill folders behind the listing, for backends that install them (claude_cli). It
    #: may hold skills the listing leaves out (``disable-model-invocation``): installed as the
    #: user has them, never shown to the model. Not part of equality: the key covers it.
    skills: tuple[Skill, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class TrialResult:
    """The answer to a `Trial`.

    `fired` is the name of the skill the model invoked (ours, a competitor, or None);
    `position` is the index of that call among the model's tool calls (0 = first).
    `shown` lists the skill names the backend confirms the model was shown, when it can tell.
    """

    key: str
    outcome: Outcome
    fired: str | None = None
    position: int | None = None
    latency_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    retries: int = 0
    error: str | None = None
    backend_version: str | None = None
    shown: tuple[str, ...] | None = None
    #: What the model did, bounded and secret-free (`skilleval.excerpt.make_excerpt`).
    excerpt: str | None = None


@dataclass(frozen=True)
class Completion:
    """Text returned by `Backend.complete` (used by proposers, judges and comparators)."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
