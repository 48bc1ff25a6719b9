"""``skilleval store SUBCOMMAND``: maintenance verbs over the result store.

Subcommands are lazy ``"module:function"`` strings (each takes argv, returns an exit code),
so adding one is one line here and importing this module costs nothing.
"""
from __future__ import annotations

import importlib

from skilleval.errors import UserError

SUBCOMMANDS: dict[str, str] = {
    "check": "skilleval.store.check:check_main",
    "compact": "skilleval.store.compact:compact_main",
    "stats": "skilleval.store.stats:stats_main",
}


def store_main(argv: list[str]) -> int:
    names = ", ".join(sorted(SUBCOMMANDS))
    if not argv:  # bad input: one line on stderr, as every other verb says it
        raise UserError(f"skilleval store needs a subcommand: {names} (skilleval store --help)")
    if argv[0] in ("-h", "--help"):
        print(f"usage: skilleval store {{{names}}} [--help]\n\nMaintenance of the result store; "
              "`skilleval store SUBCOMMAND --help` for each.")
        return 0
    target = SUBCOMMANDS.get(argv[0])
    if target is None:
        raise UserError(f"skilleval store: unknown subcommand {argv[0]!r}; valid: {names}")
    module, _, func = target.partition(":")
    return int(getattr(importlib.import_module(module), func)(argv[1:]))
