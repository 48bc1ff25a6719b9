"""The plugin contract (skilleval/hookspecs.py) says what a plugin author needs and points to
modules that exist: it named ``skilleval.trigger.splitters`` (the module is
``skilleval.optimize.splitters``) and left out what the core checks or reads."""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

from skilleval import hookspecs
from skilleval.backends import base

REPO = Path(__file__).resolve().parents[2]


def test_every_module_the_contract_names_exists() -> None:
    text = inspect.getsource(hookspecs)
    named = set(re.findall(r"``(skilleval(?:\.\w+)+)``", text))
    assert "skilleval.optimize.splitters" in named
    for dotted in sorted(named):
        parts = dotted.split(".")
        for cut in range(len(parts), 1, -1):  # a module, or an attribute of one
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
            break
        else:
            raise AssertionError(f"hookspecs names {dotted}, which does not exist")


def test_the_contract_documents_what_the_core_reads_and_checks() -> None:
    doc = {name: inspect.getdoc(getattr(hookspecs, name)) for name in
           ("register_backends", "register_splitters", "register_proposers", "register_judges")}
    assert "every field needs a default" in hookspecs.__doc__.lower()
    assert "Literal" in hookspecs.__doc__ and "registration hook that raises" in hookspecs.__doc__
    assert "makes_calls" in doc["register_proposers"] and "validate_description" in doc["register_proposers"]
    assert "deterministic" in doc["register_judges"] and "one ``Verdict`` per expectation" in doc["register_judges"]
    assert "disjoint" in doc["register_splitters"] and "both ``should_trigger`` classes" in doc["register_splitters"]
    assert "identity()" in doc["register_backends"] and "collect_outputs" in doc["register_backends"]
    assert "super().identity()" in base.__doc__ and "collect_outputs" in base.__doc__


def test_the_judge_example_is_not_installed_editable() -> None:
    readme = (REPO / "plugins" / "skilleval-judge-example" / "README.md").read_text()
    assert "pip install -e" not in readme and "pip install plugins/skilleval-judge-example" in readme
