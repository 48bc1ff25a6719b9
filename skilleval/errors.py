"""Exceptions that map to the documented exit codes.

0 ran · 2 bad input or config (one clear line, no traceback) · 3 the harness could not
produce valid measurements (for example every trial errored, or a self-check failed) ·
4 a budget cap (`budget.max_calls` / `budget.max_usd`) stopped the job; what was measured
before the stop is stored and reported, marked partial.
"""
from __future__ import annotations


class SkillevalError(Exception):
    """Base class; `exit_code` is what the CLI exits with."""

    exit_code = 1


class UserError(SkillevalError):
    """Bad input or configuration. The message names the file/entry/key at fault."""

    exit_code = 2


class HarnessError(SkillevalError):
    """The harness could not measure (all trials errored, self-check failed, ...)."""

    exit_code = 3


class BudgetExhausted(SkillevalError):
    """Raised inside a loop when `budget.max_calls` / `budget.max_usd` is reached."""

    exit_code = 4
