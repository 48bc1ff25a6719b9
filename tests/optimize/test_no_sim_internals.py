"""Issue 8 item 9: the optimiser's evidence must not come from the simulator.

The offline proposer (`optimize/heuristic.py`) once carried 38 of the simulator's 42
down-weighted words and phrasing keyed to its exclusion regex. These tests fail if any
simulator word list comes back or the optimiser reaches into `skilleval.sim.model`.
"""
from __future__ import annotations

import ast
from pathlib import Path

from skilleval.optimize import heuristic
from skilleval.sim import model as sim

OPTIMIZE = Path(heuristic.__file__).parent


def test_heuristic_holds_no_simulator_word_list() -> None:
    assert not hasattr(heuristic, "_GENERIC")
    # Every set of words the heuristic keeps must be free of the simulator's down-weighted
    # request words (its GENERIC list): those are not function words of English.
    for name, value in vars(heuristic).items():
        if isinstance(value, frozenset):
            shared = value & sim.GENERIC
            assert not shared, f"heuristic.{name} shares {sorted(shared)} with sim.model.GENERIC"


def test_heuristic_stems_with_a_general_stemmer_not_the_simulators() -> None:
    # Snowball (Porter 2) and the simulator's small suffix stripper disagree on words
    # like these; the heuristic must give Snowball's answers.
    assert heuristic.stem("tidying") == "tidi" != sim.stem("tidying")
    assert heuristic.stem("spaces") == "space" != sim.stem("spaces")


def test_optimize_package_never_imports_the_simulated_model() -> None:
    for path in OPTIMIZE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            mods = []
            if isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            # prompts.py registers its responder with the simulator's registry (the public
            # extension point of sim.completion); nothing may read the model's internals.
            assert not any(m.startswith("skilleval.sim.model") or m == "skilleval.sim.model"
                           for m in mods), f"{path.name} imports {mods}"
