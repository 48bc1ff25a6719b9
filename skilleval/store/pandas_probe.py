"""Keep pyarrow's first conversion from importing pandas in a `skilleval` job.

pyarrow asks, at its first conversion of a Python list (``pa.array``, ``Table.from_pylist``),
whether the input is a pandas object, and to answer it imports pandas when pandas is
installed: about half a second, more than the rest of a short stub run, for a question whose
answer is always no here (the store converts rows of Python values, never pandas objects).
skilleval does not depend on pandas; the cost falls on whoever has it installed.

`skip_pandas_probe` makes that first probe find no pandas, so pyarrow records "no pandas"
for its is-this-a-DataFrame checks. Whatever needs pandas later still gets it: pyarrow's
pandas conversions (``to_pandas``) import pandas on demand when it was not found before.
Called once per job (`app.run_job`), never on import, so a program that imports skilleval
as a library keeps pyarrow's usual behaviour. Hand-written because pyarrow has no switch for
it; tests/spine/test_startup_imports.py runs a job with pandas importable and checks both halves.
"""
from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder


class _NoPandas(MetaPathFinder):
    """``import pandas`` fails while this finder is first on ``sys.meta_path`` (pandas not
    yet imported). Not ``sys.modules["pandas"] = None``: pyarrow's compiled import then
    hands back None instead of raising."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def skip_pandas_probe() -> None:
    """Run pyarrow's pandas probe now, with pandas unimportable for its duration."""
    if "pandas" in sys.modules:  # already paid for: nothing to save, nothing to change
        return
    import pyarrow as pa

    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        pa.array([], type=pa.int8())
    finally:
        sys.meta_path.remove(finder)
