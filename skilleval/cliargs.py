"""One argparse parser for every non-Hydra verb (`sql`, `diff`, `store check`, `view`, ...)."""
from __future__ import annotations

import argparse
from typing import NoReturn

from skilleval.errors import UserError


class ArgParser(argparse.ArgumentParser):
    """argparse that reports bad usage as a UserError: exit 2 with one line naming the verb,
    instead of argparse's usage dump and its own exit code."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{self.prog}: {message}")
