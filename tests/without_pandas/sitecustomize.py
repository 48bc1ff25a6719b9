"""Makes `pandas` unimportable in the Python processes the test suite starts (tests/conftest.py
puts this folder on their PYTHONPATH).

Why: skilleval does not depend on pandas, and a core install (`pip install .`) has none. The
test extra brings it in only for statsmodels, the reference implementation our statistics are
checked against in-process. With pandas present, pyarrow imports it at its first conversion
(to ask whether the input is a DataFrame), about 0.2 s of every short `skilleval` process the
suite starts. Hiding it runs those processes as a core install has them, and proves on every
run that no command needs pandas.
"""
from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder


class _HidePandas(MetaPathFinder):
    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by tests/without_pandas)",
                                      name=name)
        return None


sys.meta_path.insert(0, _HidePandas())
