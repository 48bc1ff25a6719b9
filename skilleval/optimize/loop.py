"""The ``trigger_opt`` experiment: description optimisation that generalises, within a budget.

Iteration 0 evaluates the original description on train + validation. Each iteration
then asks the proposer for ``optimize.candidates`` descriptions (it sees train failures and
train scores only) and screens each on train + validation with one run per query
(``optimize.screen``); the screen ranks them (`selection.rank_key`), and only the top one
gets its remaining runs (which reuse the screen's trials: same keys), unless it does not
even beat the incumbent on the screen. A lone candidate (``candidates=1``, or one left by
``prescreen``) is screened the same way, so a proposal that loses on its first run per
query costs one run per query, not all of them. It replaces the incumbent only on a paired win
(`selection.compare`). Trials are cached, so a description met before costs nothing. The loop stops
when the incumbent passes every train and validation query, at ``max_iterations``, after
``patience`` iterations without a replacement, when the proposer has nothing new, or when
the budget runs out. A loop that kept the original then tries its fully evaluated candidates
against it once more (``optimize.reconsider_alpha``, `selection.reconsider`; no calls).
Then, once, the original and the best are evaluated on test.

With ``splitter=holdout`` or ``none`` there is no validation split: ranking and the paired
test use train only (said in the output); with ``none`` there is no test number.
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from skilleval.errors import BudgetExhausted, HarnessError, UserError
from skilleval.optimize import report
from skilleval.optimize.inputs import check_opt_inputs, opt_inputs
from skilleval.optimize.plan import OptimizeSettings, make_plan, screening
from skilleval.optimize.proposal_checks import ask_proposer, usable
from skilleval.optimize.proposers import Attempt, ProposalRequest, QueryScore
from skilleval.optimize.selection import QueryOutcome, compare, outcomes, passed, rank_key, reconsider, score_text
from skilleval.optimize.split_checks import Split, split_cases  # Split re-exported there
from skilleval.optimize.state import Entry, LoopState, StateStore, run_key
from skilleval.trigger.policies import max_runs
from skilleval.trigger.runner import QueryResult, TrialRunner, require_trustworthy
from skilleval.terminal import safe

if TYPE_CHECKING:
    from skilleval.app import JobContext


class Optimizer:
    """One trigger_opt job (see the module docstring)."""

    def __init__(self, job: "JobContext", opt: OptimizeSettings) -> None:
        self.job = job
        self.opt = opt
        self.console = job.console

    def spent(self) -> tuple[int, float]:
        """This run's backend calls and cost so far: the trials' and the proposer's."""
        return (self.runner.calls_made + int(getattr(self.proposer, "calls_made", 0)),
                self.runner.cost_usd + float(getattr(self.proposer, "cost_usd", 0.0)))

    # -- set-up ---------------------------------------------------------------------------

    def prepare(self) -> None:
        job = self.job
        self.skill, self.cases = job.prepared or opt_inputs(job, self.opt)  # from check_inputs
        self.distractors = job.load_distractors()
        self.splitter_name = str(job.cfg.splitter.get("name"))
        self.split: Split = split_cases(job, self.cases)  # checked: disjoint, complete, 2 classes
        self.proposer = job.build("proposer", job.cfg.proposer)
        self.runner: TrialRunner = job.new_runner()
        self.by_id = {c.id: c for c in self.cases}
        self.key = run_key(job.cfg, self.skill, self.cases)
        self.states = StateStore(job.store, job.identity_row(), self.skill.name, self.key, spent=self.spent)
        self.attribution = None
        if self.opt.attribution:  # optimize.attribution: the proposer gets the sentence table
            from skilleval.optimize.attribution_feedback import AttributionFeedback, sentence_count

            if not getattr(self.proposer, "reads_attribution", False):
                raise UserError(f"optimize.attribution=true: proposer={self.job.cfg.proposer.get('name')} does "
                                "not read the attribution table (use proposer=llm)")
            self.attribution = AttributionFeedback()
        self.plan = make_plan(self.split, max_runs(self.runner.settings), self.opt, self.proposer,
                              sentence_count(self.skill.description) if self.attribution else 0)
        self.prescreen = None
        if self.opt.prescreen:
            from skilleval.optimize.prescreen import Prescreener

            self.prescreen = Prescreener.checked(self)  # refused (exit 2) before any call

    def check_budget(self) -> None:
        b, plan = self.job.budget, self.plan
        if b is None:
            return
        if b.max_calls is not None and b.max_calls < plan.one_iteration:
            raise UserError(
                f"budget.max_calls={b.max_calls} is too small for one iteration: the original "
                f"({plan.initial}), one round of {self.opt.candidates} candidates"
                f"{self._prescreened()} ({plan.iteration}) and the final test ({plan.final}) need up to "
                f"{plan.one_iteration} calls")
        per_call = self._cost_per_trial()
        if b.max_usd is not None and per_call is not None and b.max_usd < per_call * plan.one_iteration:
            raise UserError(
                f"budget.max_usd={b.max_usd} is too small for one iteration: up to "
                f"{plan.one_iteration} calls at about ${per_call:.5f} each "
                f"(${per_call * plan.one_iteration:.4f})")

    def _prescreened(self) -> str:
        o = self.opt
        if o.prescreen and o.candidates > o.prescreen_keep:
            return f", {o.prescreen_keep} of them past the {o.prescreen} prescreen"
        return ""

    def _cost_per_trial(self) -> float | None:
        listing = [self.skill, *self.distractors]
        tokens_in = 300 + sum(len(s.name) + len(s.description) + 4 for s in listing) // 4 + 40
        try:
            return self.job.backend.estimate_cost_usd(tokens_in, 60)
        except Exception:  # an estimate is best effort
            return None

    def print_plan(self) -> None:
        from skilleval.evalsets.cli import warn_before_run  # incl. near-duplicates across splits
        from skilleval.trigger.experiment import self_check_calls

        warn_before_run(self.job, self.skill, self.cases, runs=self.runner.settings.runs,
                        threshold=self.runner.settings.threshold, splits={
            c.id: name for name in ("train", "validation", "test") for c in getattr(self.split, name)})
        p, s, b = self.plan, self.split, self.job.budget
        runs = max_runs(self.runner.settings)
        per_call = self._cost_per_trial()
        cost = (f", ≈${per_call * p.total:.4f} at most" if per_call is not None
                else ", cost: not estimable")
        sel = "validation" if s.validation else "train (no validation split)"
        self.console.print(
            f"[bold]trigger_opt[/bold] {safe(self.skill.name)}: split {self.splitter_name} "
            f"train {len(s.train)} / validation {len(s.validation)} / test {len(s.test)}; "
            f"backend {safe(self.job.backend.name)}/{safe(self.job.backend.model)}, proposer {safe(str(self.job.cfg.proposer.get('name')))}")
        le, attr = ("≈", f", attribution ≈{len(s.train) * runs} per sentence + 1 of each new incumbent") if self.attribution else ("≤", "")
        self.console.print(
            f"plan: ≤{self.opt.max_iterations} iterations × {self.opt.candidates} candidates, "
            f"≤{runs} runs/query ({self.runner.settings.policy} for selection, "
            f"{self.test_settings().policy} for the test); per iteration {le}{p.iteration} calls "
            f"({p.proposer_calls} proposer{attr}); total {le}{p.total} calls{self_check_calls(self.job)}{cost}; "
            f"selection by {sel}, "
            f"paired {self.opt.paired_test} α={self.opt.alpha}")
        if b is not None and (b.max_calls is not None or b.max_usd is not None):
            self.console.print(f"budget: max_calls={b.max_calls} max_usd={b.max_usd} "
                               f"(≤{p.final} calls kept back for the final test)")

    # -- evaluation ------------------------------------------------------------------------

    async def evaluate(self, description: str, label: str, *, screen: bool = False
                       ) -> tuple[list[QueryOutcome], list[QueryOutcome]]:
        """Train and validation outcomes of a description. `screen`: one run per query,
        whose trials a later full evaluation of the same description reuses."""
        skill = self.skill.with_description(description)
        cases = [*self.split.train, *self.split.validation]
        settings = replace(self.runner.settings, runs=1, policy="fixed") if screen else None
        results = await self.runner.evaluate(skill, cases, self.distractors, label=label,
                                             settings=settings)
        require_trustworthy(results, self.job.cfg.trigger.get("max_error_rate", 1.0))
        out = outcomes(results)
        n = len(self.split.train)
        return out[:n], out[n:]

    def request(self, state: LoopState, iteration: int) -> ProposalRequest:
        """What the proposer sees: train results and train scores only, by construction."""
        def scores(entry: Entry) -> tuple[QueryScore, ...]:
            return tuple(QueryScore(self.by_id[o.case_id].query, o.should_trigger, o.triggers,
                                    o.runs, o.passed) for o in entry.train)

        inc = state.best
        history = tuple(Attempt(e.iteration, e.description, passed(e.train), len(e.train), scores(e))
                        for e in state.entries if e is not inc)
        return ProposalRequest(self.skill.name, self.skill.body, inc.description, scores(inc),
                               history, iteration, self.opt.candidates)

    # -- the loop --------------------------------------------------------------------------

    def _stop_reason(self, state: LoopState, iteration: int) -> str | None:
        inc = state.best
        if passed(inc.train) == len(inc.train) and passed(inc.validation) == len(inc.validation):
            return f"all_passed (iteration {iteration})"
        if iteration >= self.opt.max_iterations:
            return f"max_iterations ({self.opt.max_iterations})"
        if state.since_improvement >= self.opt.patience:
            return f"plateau (iteration {iteration}, patience {self.opt.patience})"
        return None

    async def iterate(self, state: LoopState) -> LoopState:
        if not state.entries:
            train, val = await self.evaluate(self.skill.description, "original")
            entry = Entry(0, 0, self.skill.description, "original", train, val, decision="original")
            state.entries.append(entry)
            state.exit_reason = self._stop_reason(state, 0)
            self.states.checkpoint(state, [entry])
            self._print_entry(entry, state)
        while state.exit_reason is None:
            it = state.iteration + 1
            request = self.request(state, it)
            if self.attribution is not None:
                request = replace(request, confidence=self.runner.settings.confidence,
                                  attribution=await self.attribution.table(self, state.best.description))
            try:  # any failure or wrong answer of the proposer is a HarnessError here
                proposals = await ask_proposer(self.proposer, request, backend=self.job.backend,
                                               budget=self.job.budget)
                report.log_proposals(self.job.output_dir, it, request, proposals)
            except HarnessError as exc:
                self.console.print(f"[yellow]proposer failed: {safe(exc)}[/yellow]")
                state.iteration = it
                state.exit_reason = f"proposer_failed (iteration {it})"
                self.states.checkpoint(state, [])
                break
            proposals = usable(proposals, self.opt.candidates, state.tried(), self.console, it)
            if not proposals:
                state.iteration = it
                state.exit_reason = f"no_new_candidates (iteration {it})"
                self.states.checkpoint(state, [])
                break
            if self.prescreen is not None:
                proposals = await self.prescreen.select(self, it, proposals)
            new: list[Entry] = []
            screen = screening(self.opt)
            for k, prop in enumerate(proposals):
                train, val = await self.evaluate(prop.description, f"iter {it} cand {k + 1}",
                                                 screen=screen)
                new.append(Entry(it, k + 1, prop.description, prop.proposer, train, val,
                                 proposer_calls=prop.calls, screened=screen))
            ranked = sorted(new, key=lambda e: rank_key(e.train, e.validation, e.description))
            for r, e in enumerate(ranked, 1):
                e.rank = r
            inc = state.best
            top = ranked[0]
            screened_out = False
            if screen:
                # The screen ranked them. A top candidate that does not even win more queries
                # than it loses against the incumbent on its one run is dropped without
                # paying for its other runs; otherwise it gets them now.
                pre = compare(top.train + top.validation, inc.train + inc.validation,
                              alpha=self.opt.alpha, test=self.opt.paired_test)
                screened_out = pre.wins <= pre.losses
                if not screened_out:
                    top.train, top.validation = await self.evaluate(
                        top.description, f"iter {it} cand {top.candidate}")
                    top.screened = False
            cmp = compare(top.train + top.validation, inc.train + inc.validation,
                          alpha=self.opt.alpha, test=self.opt.paired_test)
            better = rank_key(top.train, top.validation, top.description) < \
                rank_key(inc.train, inc.validation, inc.description)
            top.p_value = cmp.p_value
            state.entries.extend(new)
            if screened_out:
                top.decision = f"rejected on the screen ({cmp.describe()}, 1 run/query)"
                state.since_improvement += 1
            elif cmp.replace and better:
                top.decision = f"accepted ({cmp.describe()})"
                state.incumbent = len(state.entries) - len(new) + new.index(top)
                state.since_improvement = 0
            else:
                why = "no significant paired win" if better else "ranks below the incumbent"
                top.decision = f"rejected: {why} ({cmp.describe()})"
                state.since_improvement += 1
            for e in ranked[1:]:
                e.decision = f"rank {e.rank}" + (" (screened: 1 run/query)" if screen else "")
            state.iteration = it
            state.exit_reason = self._stop_reason(state, it)
            self.states.checkpoint(state, new)
            for e in new:
                self._print_entry(e, state)
        return state

    def _reconsider(self, state: LoopState) -> None:
        """``optimize.reconsider_alpha``: see `selection.reconsider`."""
        if self.opt.reconsider_alpha is None or state.incumbent != 0:
            return
        full = [(i, e) for i, e in enumerate(state.entries) if i and not e.screened
                and e.description != state.original.description]
        pick = reconsider((state.original.train, state.original.validation),
                          [(e.train, e.validation) for _, e in full],
                          alpha=self.opt.reconsider_alpha, test=self.opt.paired_test)
        if pick is not None:
            state.incumbent, e = full[pick[0]]
            e.decision = (f"accepted after the loop ({pick[1].describe()} vs the original, "
                          f"alpha {self.opt.reconsider_alpha}); was: {e.decision}")
            self.states.checkpoint(state, [])
            self._print_entry(e, state)

    def _print_entry(self, e: Entry, state: LoopState) -> None:
        star = "★" if state.best is e else " "
        val = f" val {score_text(e.validation)}" if e.validation else ""  # errors: not fails
        self.console.print(f"{star} it {e.iteration} c{e.candidate}: train "
                           f"{score_text(e.train)}{val}  {e.decision}  "
                           f"[dim]{safe(e.description[:90])}{'…' if len(e.description) > 90 else ''}[/dim]")

    async def final_test(self, state: LoopState) -> dict[str, list[QueryResult]]:
        if not self.split.test:
            return {}
        out: dict[str, list[QueryResult]] = {}
        # The reported test rates must be unbiased: `decided` (selection's saving) would stop
        # runs early, so the test runs `fixed` (same plan, reusing selection's trials).
        settings = self.test_settings()
        for label, desc in (("original", state.original.description),
                            ("best", state.best.description)):
            if label == "best" and desc == state.original.description:
                out["best"] = out["original"]
                continue
            out[label] = await self.runner.evaluate(self.skill.with_description(desc),
                                                    list(self.split.test), self.distractors,
                                                    label=f"test: {label}", settings=settings)
        return out

    def test_settings(self) -> Any:
        s = self.runner.settings
        return replace(s, policy="fixed") if s.policy == "decided" else s

    async def run(self) -> tuple[LoopState, dict[str, list[QueryResult]], bool]:
        from skilleval.trigger.experiment import run_self_check

        state = self.states.load() if self.opt.resume else None
        if state is not None and (state.exit_reason or "").startswith("budget"):
            # The budget is per invocation (and left out of the run key): a run it stopped
            # continues from its last finished iteration, like a killed one.
            state.exit_reason = None
        if state is not None:
            self.console.print(f"[cyan]resuming[/cyan] {self.key}: iterations 0–{state.iteration} "
                               f"finished earlier (runs {', '.join(state.runs)}); "
                               + ("loop already finished, going to test" if state.exit_reason
                                  else f"continuing with iteration {state.iteration + 1}"))
        else:
            state = LoopState(self.key)
            self.states.record_split(self.splitter_name, self.split)
        state.runs.append(self.job.run_id)
        await run_self_check(self.job, self.skill, self.distractors, self.runner)
        budget = self.job.budget
        holding = budget.holding(self.plan.final, "the held-out test") if budget is not None else nullcontext()
        try:
            with holding:
                state = await self.iterate(state)
        except BudgetExhausted as exc:
            state.exit_reason = f"budget (iteration {state.iteration}): {exc}"
            self.console.print(f"[yellow]stopped: {safe(exc)}; keeping what was learned[/yellow]")
            if state.entries:
                self.states.checkpoint(state, [])
        if not state.entries:
            raise HarnessError("the budget ran out before the original description was evaluated")
        self._reconsider(state)
        partial_test = False
        try:
            tests = await self.final_test(state)
        except BudgetExhausted as exc:
            self.console.print(f"[yellow]test evaluation stopped: {safe(exc)}[/yellow]")
            tests, partial_test = {}, True
        return state, tests, partial_test


def run_trigger_opt(job: "JobContext") -> int:
    from skilleval.gates import estimates as gate_estimates

    opt = OptimizeSettings.from_cfg(job.cfg.get("optimize"))
    o = Optimizer(job, opt)
    o.prepare()
    o.check_budget()
    o.print_plan()
    with job.progress():
        state, tests, partial_test = job.run(o.run())
    o.proposer_calls = int(getattr(o.proposer, "calls_made", 0))
    o.proposer_cost = float(getattr(o.proposer, "cost_usd", 0.0))
    calls, cost = o.spent()
    state.calls, state.cost_usd = state.calls + calls, state.cost_usd + cost
    result = report.build_results(o, state, tests, calls=calls, partial_test=partial_test)
    # a budget stop anywhere (loop or test) makes the run partial: its gates are not checked
    result["partial"] = job.summary["partial"] = bool(job.budget is not None and job.budget.stopped)
    if o.attribution is not None:  # its calls are inside `calls`; this is their share
        result["attribution"] = o.attribution.summary()
    report.write_outputs(o, result)
    report.print_summary(o, state, tests, result)
    job.summary.update(calls_made=calls, calls_cached=o.runner.calls_cached,
                       cost_usd=o.runner.cost_usd + o.proposer_cost,
                       exit_reason=state.exit_reason, best_test=result.get("best_test_score"),
                       prescreen=None if o.prescreen is None else {
                           "backend": o.prescreen.backend_name, "dropped": o.prescreen.dropped,
                           "iterations": o.prescreen.log},
                       original_test=result.get("original_test_score"),
                       attribution=result.get("attribution"),
                       gate_metrics={k: {**v, "label": f"{k} of the best description on the held-out test"}
                                     for k, v in gate_estimates((result.get("test") or {}).get("best") or {}).items()})
    if opt.apply:
        from skilleval.optimize.apply import apply_best

        job.summary["apply"] = apply_best(job, o.skill, state, tests, partial_test)
    if (state.exit_reason or "").startswith("proposer_failed") and len(state.entries) == 1:
        # outputs are written; but an optimisation that never got a candidate is not a pass
        raise HarnessError(f"trigger_opt: the proposer failed before any candidate was "
                           f"evaluated ({state.exit_reason}); nothing was optimised")
    return 0


run_trigger_opt.gate_metrics, run_trigger_opt.reports = ("precision", "recall", "accuracy"), ()  # type: ignore[attr-defined]
run_trigger_opt.check_inputs = check_opt_inputs  # type: ignore[attr-defined]


def trigger_opt_factory(params: Any) -> Any:
    return run_trigger_opt
