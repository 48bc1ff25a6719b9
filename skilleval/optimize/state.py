"""The optimiser's state: what each iteration tried and decided, persisted for resume.

Every evaluated description is one row of the store table ``candidates`` (query it with
``skilleval sql "select iteration, candidate, decision, validation_passed from candidates"``).
When an iteration finishes, one more row (``role = 'iteration'``) carries the whole loop
state as JSON. A run is identified by its *run key*: a hash of the resolved config (minus
store location, outputs, progress and budget, so a budget-stopped run can be continued with
a larger budget), the skill's content and the eval set. Running the same command again
finds the last finished iteration under that key and continues from there; its trials are
read from the store's cache, so nothing finished is paid for twice.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Sequence

import pyarrow as pa
from omegaconf import DictConfig, OmegaConf

from skilleval.domain import Skill, TriggerCase
from skilleval.optimize.selection import QueryOutcome, passed, run_accuracy
from skilleval.store.catalog import Store, register_schema
from skilleval.store.schema import IDENTITY

CANDIDATES = pa.schema(IDENTITY + [
    ("run_key", pa.string()),
    ("skill", pa.string()),
    ("iteration", pa.int32()),
    ("candidate", pa.int32()),
    ("role", pa.string()),  # original | candidate | iteration (state checkpoint)
    ("proposer", pa.string()),
    ("description", pa.string()),
    ("chars", pa.int32()),
    ("train_passed", pa.int32()),
    ("train_total", pa.int32()),
    ("validation_passed", pa.int32()),
    ("validation_total", pa.int32()),
    ("train_run_accuracy", pa.float64()),
    ("validation_run_accuracy", pa.float64()),
    ("rank", pa.int32()),
    ("decision", pa.string()),
    ("p_value", pa.float64()),
    ("incumbent", pa.bool_()),
    ("proposer_calls", pa.int32()),
    ("state_json", pa.string()),
])

SPLITS = pa.schema(IDENTITY + [
    ("run_key", pa.string()),
    ("splitter", pa.string()),
    ("case_id", pa.string()),
    ("query", pa.string()),
    ("should_trigger", pa.bool_()),
    ("split", pa.string()),
])

register_schema("candidates", CANDIDATES)
register_schema("splits", SPLITS)

_VOLATILE = ("store", "budget", "progress", "hydra", "reporter")


def run_key(cfg: DictConfig, skill: Skill, cases: Sequence[TriggerCase]) -> str:
    """The identity of "the same command": config + skill content + eval set."""
    plain = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(plain, dict)
    for key in _VOLATILE:
        plain.pop(key, None)
    opt = dict(plain.get("optimize") or {})
    opt.pop("apply", None)
    plain["optimize"] = opt
    trig = dict(plain.get("trigger") or {})
    trig.pop("concurrency", None)  # speed only: resuming at a lower rate is the same run
    plain["trigger"] = trig
    blob = json.dumps([plain, skill.content_hash, skill.name,
                       [[c.id, c.query, c.should_trigger, c.split] for c in cases]],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


@dataclass
class Entry:
    """One evaluated description."""

    iteration: int
    candidate: int
    description: str
    proposer: str
    train: list[QueryOutcome]
    validation: list[QueryOutcome]
    decision: str = ""
    p_value: float | None = None
    proposer_calls: int = 0
    rank: int = 0
    screened: bool = False  # only the screen's one run per query (not every run)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["train"] = [o.to_dict() for o in self.train]
        d["validation"] = [o.to_dict() for o in self.validation]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Entry":
        d = dict(d)
        d["train"] = [QueryOutcome.from_dict(o) for o in d["train"]]
        d["validation"] = [QueryOutcome.from_dict(o) for o in d["validation"]]
        return cls(**d)

    def row(self, incumbent: bool) -> dict[str, Any]:
        return {
            "iteration": self.iteration, "candidate": self.candidate,
            "role": "original" if self.iteration == 0 else "candidate", "proposer": self.proposer,
            "description": self.description, "chars": len(self.description),
            "train_passed": passed(self.train), "train_total": len(self.train),
            "validation_passed": passed(self.validation), "validation_total": len(self.validation),
            "train_run_accuracy": run_accuracy(self.train),
            "validation_run_accuracy": run_accuracy(self.validation), "rank": self.rank,
            "decision": self.decision, "p_value": self.p_value, "incumbent": incumbent,
            "proposer_calls": self.proposer_calls, "state_json": None,
        }


@dataclass
class LoopState:
    run_key: str
    entries: list[Entry] = field(default_factory=list)
    incumbent: int = 0  # index into entries
    iteration: int = 0  # last finished iteration (0 = the original was evaluated)
    since_improvement: int = 0
    exit_reason: str | None = None
    calls: int = 0  # backend calls over all (resumed) runs: trials + proposer
    cost_usd: float = 0.0
    runs: list[str] = field(default_factory=list)  # run ids that worked on this state

    @property
    def best(self) -> Entry:
        return self.entries[self.incumbent]

    @property
    def original(self) -> Entry:
        return self.entries[0]

    def tried(self) -> set[str]:
        return {e.description for e in self.entries}

    def to_json(self) -> str:
        d = asdict(self)
        d["entries"] = [e.to_dict() for e in self.entries]
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> "LoopState":
        d = json.loads(text)
        d["entries"] = [Entry.from_dict(e) for e in d["entries"]]
        return cls(**d)


class StateStore:
    """Writes candidate rows and iteration checkpoints; finds the checkpoint to resume from."""

    def __init__(self, store: Store, identity: dict[str, Any], skill: str, key: str,
                 spent: Callable[[], tuple[int, float]] | None = None) -> None:
        """`spent`: this run's calls and cost so far. Each checkpoint's state counts them, so a
        run killed after it still counts in a resumed run's ``calls_all_runs``."""
        self.store = store
        self.spent = spent
        self.identity = identity
        self.skill = skill
        self.key = key
        self._writer = None

    def _w(self):  # noqa: ANN202
        if self._writer is None:
            self._writer = self.store.writer("candidates", self.identity["experiment"],
                                             self.identity["run_id"])
        return self._writer

    def _base(self) -> dict[str, Any]:
        return {**self.identity, "ts": dt.datetime.now(dt.timezone.utc), "run_key": self.key,
                "skill": self.skill}

    def checkpoint(self, state: LoopState, new: Sequence[Entry]) -> None:
        """Record `new` entries and the state after them; durable when this returns."""
        rows = [{**self._base(), **e.row(state.entries[state.incumbent] is e)} for e in new]
        inc = state.best
        calls, cost = self.spent() if self.spent is not None else (0, 0.0)
        saved = replace(state, calls=state.calls + calls, cost_usd=state.cost_usd + cost)
        rows.append({**self._base(), **{k: None for k in CANDIDATES.names if k not in self._base()},
                     "iteration": state.iteration, "candidate": -1, "role": "iteration",
                     "description": inc.description, "chars": len(inc.description),
                     "decision": state.exit_reason or "continue", "state_json": saved.to_json()})
        w = self._w()
        w.write(rows)
        w.flush()

    def load(self) -> LoopState | None:
        if "candidates" not in self.store.tables():
            return None
        table = self.store.query(
            "SELECT state_json FROM candidates WHERE run_key = ? AND role = 'iteration' "
            "ORDER BY iteration DESC, ts DESC LIMIT 1", [self.key])
        if table.num_rows == 0:
            return None
        return LoopState.from_json(table.column("state_json")[0].as_py())

    def record_split(self, splitter: str, split: Any) -> None:
        rows = []
        for name in ("train", "validation", "test"):
            for c in split.of(name):
                rows.append({**self.identity, "ts": dt.datetime.now(dt.timezone.utc),
                             "run_key": self.key, "splitter": splitter, "case_id": c.id,
                             "query": c.query, "should_trigger": c.should_trigger, "split": name})
        w = self.store.writer("splits", self.identity["experiment"], self.identity["run_id"])
        w.write(rows)
        w.close()
