"""Proxy pre-screening for trigger_opt (``optimize.prescreen=embed``).

Before any candidate costs a paid call, every proposal is evaluated on a free local proxy
backend (any registered backend name; ``embed`` is the intended one) on train + validation,
ranked with the loop's own `selection.rank_key`, and only the top
``optimize.prescreen_keep`` go on to the real backend. The proxy's trials are kept in memory
only (its answers are not the real backend's, so they never enter the store).

The proxy sees exactly what the paid screen would see (train + validation outcomes feed the
ranking there too); the proposer still sees train only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from skilleval.optimize.selection import outcomes, rank_key

if TYPE_CHECKING:
    from skilleval.optimize.loop import Optimizer


@dataclass
class Prescreener:
    backend_name: str
    keep: int
    dropped: int = 0
    log: list[dict[str, Any]] = field(default_factory=list)
    _runner: Any = None

    @classmethod
    def checked(cls, opt: "Optimizer") -> "Prescreener":
        """The prescreen `opt` asks for, its backend built now: an unknown name, or a backend
        that calls a paid model, is refused (exit 2) before any call. A paid proxy's calls
        would be in neither the plan nor the budget, and it would get none of ``backend.*``."""
        from dataclasses import replace

        from skilleval.errors import UserError
        from skilleval.terminal import safe
        from skilleval.trigger.runner import TrialRunner

        name, keep, candidates = opt.opt.prescreen, opt.opt.prescreen_keep, opt.opt.candidates
        try:
            backend = opt.job.build("backend", {"name": name})
        except UserError as exc:  # "unknown backend 'nope'" did not say which setting
            raise UserError(f"optimize.prescreen={name}: {exc}") from None
        if getattr(backend, "needs_self_check", True):  # a real model, billed per call
            raise UserError(f"optimize.prescreen={name}: the prescreen must be a free local backend "
                            "(embed, stub): a real backend's calls would be in neither the plan nor "
                            "the budget")
        if candidates <= keep:  # said, not silently a no-op
            opt.console.print(f"[yellow]note: optimize.prescreen={safe(name)} screens nothing: "
                              f"optimize.candidates={candidates} <= optimize.prescreen_keep={keep}: "
                              "every proposal goes to the paid backend[/yellow]")
        runner = TrialRunner(backend, settings=replace(opt.runner.settings, policy="fixed"), store=None)
        return cls(name, keep, _runner=runner)

    async def select(self, opt: "Optimizer", iteration: int, proposals: Sequence[Any]) -> list[Any]:
        if len(proposals) <= self.keep:
            return list(proposals)
        runner = self._runner  # built by `checked`
        cases = [*opt.split.train, *opt.split.validation]
        n = len(opt.split.train)
        scored = []
        for k, prop in enumerate(proposals):
            results = await runner.evaluate(opt.skill.with_description(prop.description), cases,
                                            opt.distractors, label=f"prescreen {iteration}.{k + 1}")
            out = outcomes(results)
            scored.append((rank_key(out[:n], out[n:], prop.description), k, prop))
        scored.sort(key=lambda t: t[0])
        kept = [p for _, _, p in scored[: self.keep]]
        self.dropped += len(proposals) - len(kept)
        self.log.append({"iteration": iteration, "proposed": len(proposals), "kept": len(kept),
                         "ranking": [k + 1 for _, k, _ in scored]})
        opt.console.print(f"[dim]prescreen ({self.backend_name}): kept {len(kept)} of "
                          f"{len(proposals)} candidates for the paid backend[/dim]")
        return kept
