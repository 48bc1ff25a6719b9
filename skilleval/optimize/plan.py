"""What a ``trigger_opt`` run may spend: its settings and the worst-case call plan printed
(and checked against the budget) before the first call."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from skilleval.errors import UserError
from skilleval.optimize.splitters import Split


@dataclass
class OptimizeSettings:
    candidates: int = 1  # see conf/optimize/default.yaml for why 1 and 3
    max_iterations: int = 5
    patience: int = 3
    alpha: float = 0.1
    paired_test: str = "mcnemar"  # mcnemar | sign
    screen: bool = True  # one run per query first; only a top candidate that beats the incumbent gets all runs
    apply: bool = False
    resume: bool = True
    prescreen: str | None = None  # a free proxy backend (e.g. embed) ranks proposals first
    prescreen_keep: int = 1  # how many of them go on to the paid backend
    attribution: bool = False  # give the proposer the incumbent's sentence-attribution table
    reconsider_alpha: float | None = 0.2  # see selection.reconsider; None: the loop's choice stands

    @classmethod
    def from_cfg(cls, node: Any) -> "OptimizeSettings":
        from omegaconf import OmegaConf

        values = OmegaConf.to_container(node, resolve=True) if node is not None else {}
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values or {}) - known)
        if unknown:
            raise UserError(f"optimize has no key {unknown[0]!r}; known: {', '.join(sorted(known))}")
        from skilleval.app import checked_number

        s = cls(**(values or {}))
        for f in fields(cls):
            if f.type == "bool" and not isinstance(getattr(s, f.name), bool):
                raise UserError(f"optimize.{f.name} must be true or false, got "
                                f"{getattr(s, f.name)!r}")
            if f.type in ("int", "float"):
                setattr(s, f.name, checked_number(f"optimize.{f.name}", getattr(s, f.name),
                                                  int if f.type == "int" else float))
        for key in ("candidates", "max_iterations", "patience"):
            if getattr(s, key) < 1:
                raise UserError(f"optimize.{key} must be at least 1, got {getattr(s, key)}")
        if s.prescreen_keep < 1:
            raise UserError(f"optimize.prescreen_keep must be at least 1, got {s.prescreen_keep}")
        if s.paired_test not in ("mcnemar", "sign"):
            raise UserError(f"optimize.paired_test must be mcnemar or sign, got {s.paired_test!r}")
        if not 0 < s.alpha <= 1:
            raise UserError(f"optimize.alpha must be in (0, 1], got {s.alpha}")
        if s.reconsider_alpha is not None:
            s.reconsider_alpha = checked_number("optimize.reconsider_alpha", s.reconsider_alpha, float)
            if not 0 < s.reconsider_alpha <= 1:
                raise UserError(f"optimize.reconsider_alpha must be null or in (0, 1], got "
                                f"{s.reconsider_alpha}")
        return s


@dataclass
class Plan:
    per_description: int  # trials to evaluate one description on train + validation (worst case)
    proposer_calls: int  # per iteration, worst case
    iteration: int
    initial: int
    final: int  # test for original and best
    max_iterations: int
    attribution_calls: int = 0  # per iteration (leave-one-out on train), included in `iteration`

    @property
    def one_iteration(self) -> int:
        return self.initial + self.iteration + self.final

    @property
    def total(self) -> int:
        return self.initial + self.max_iterations * self.iteration + self.final


def make_plan(split: Split, runs: int, opt: OptimizeSettings, proposer: Any,
              sentences: int = 0) -> Plan:
    """`sentences`: of the original description, for ``optimize.attribution`` (an estimate:
    a longer incumbent costs more; the budget is enforced per call anyway)."""
    tv = len(split.train) + len(split.validation)
    per_desc = tv * runs
    # A proposer says whether it calls the backend (``makes_calls``, default True: an unknown
    # one is budgeted as if it did), and may re-ask up to ``params.max_attempts`` per candidate.
    prop = opt.candidates * int(getattr(getattr(proposer, "params", None), "max_attempts", 1)) \
        if getattr(proposer, "makes_calls", True) is not False else 0
    # With a prescreen, only the proxy's top `prescreen_keep` reach the paid backend.
    paid = min(opt.candidates, opt.prescreen_keep) if opt.prescreen else opt.candidates
    if screening(opt):  # one run each, then the rest of the runs for the top candidate
        candidates = paid * tv + tv * (runs - 1)
    else:
        candidates = paid * per_desc
    # Leave-one-out on train: the incumbent (its trials partly reused) and one per sentence.
    attr = (sentences + 1) * len(split.train) * runs if opt.attribution and sentences >= 2 else 0
    return Plan(per_desc, prop, candidates + prop + attr, per_desc, 2 * len(split.test) * runs,
                opt.max_iterations, attr)


def screening(opt: OptimizeSettings) -> bool:
    """Whether each candidate first gets one run per query (see the loop's docstring). A lone
    candidate is screened too: one that does not even beat the incumbent on that run is
    rejected without paying for its other runs."""
    return opt.screen
