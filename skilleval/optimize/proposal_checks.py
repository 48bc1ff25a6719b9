"""The core's check of a proposer's answer (``trigger_opt``), whoever wrote the proposer.

The loop asks a proposer for ``request.count`` descriptions and budgets for that many. What
comes back is checked here, not trusted: an exception of any kind, or an answer that is not
a list of `Proposal`, is the proposer failing (`HarnessError`, which the loop reports as
``proposer_failed``); a description that fails `validate_description` is dropped (it could
never be written to SKILL.md), as is a repeat; and at most ``count`` are kept.
"""
from __future__ import annotations

from typing import Any

from skilleval.errors import HarnessError, SkillevalError
from skilleval.optimize.proposers import Proposal, ProposalRequest, validate_description
from skilleval.terminal import safe, visible_line


async def ask_proposer(proposer: Any, request: ProposalRequest, *, backend: Any, budget: Any) -> list[Proposal]:
    """``proposer.propose(...)``, its failures and wrong answers turned into HarnessError."""
    name = getattr(proposer, "name", type(proposer).__name__)
    try:
        out = await proposer.propose(request, backend=backend, budget=budget)
    except SkillevalError:  # HarnessError, BudgetExhausted, UserError: the loop's business
        raise
    except Exception as exc:  # noqa: BLE001 - a plugin's bug stops the loop, not the process
        raise HarnessError(f"proposer {name} raised {type(exc).__name__}: {visible_line(exc)}") from None
    if not isinstance(out, (list, tuple)):
        raise HarnessError(f"proposer {name} returned a {type(out).__name__}, not a list of Proposal")
    wrong = [p for p in out if not isinstance(p, Proposal) or not isinstance(p.description, str)]
    if wrong:
        raise HarnessError(f"proposer {name} returned a {type(wrong[0]).__name__} among its proposals, "
                           "not a Proposal (skilleval.optimize.proposers.Proposal) with a str description")
    return list(out)


def usable(proposals: list[Proposal], count: int, tried: set[str], console: Any = None,
           iteration: int = 0) -> list[Proposal]:
    """The valid, new proposals, at most `count` of them (the plan budgets `count`); what was
    dropped, other than repeats alone (the loop's ordinary "no new candidates"), is said in
    one line of the iteration on `console`."""
    kept: list[Proposal] = []
    invalid: list[str] = []
    repeats = over = 0
    seen = set(tried)
    for p in proposals:
        problem = validate_description(p.description)
        if problem is not None:
            invalid.append(problem)
        elif p.description in seen:
            repeats += 1
        elif len(kept) >= count:
            over += 1
        else:
            seen.add(p.description)
            kept.append(p)
    parts = [f"{len(invalid)} invalid (first: {invalid[0]})"] if invalid else []
    if over:
        parts.append(f"{over} beyond the {count} asked for")
    if parts and console is not None:
        if repeats:
            parts.append(f"{repeats} repeat(s)")
        console.print(f"[yellow]it {iteration}: proposer {safe(proposals[0].proposer)}: dropped "
                      f"{len(proposals) - len(kept)} of {len(proposals)} proposal(s): "
                      f"{safe('; '.join(parts))}[/yellow]")
    return kept
