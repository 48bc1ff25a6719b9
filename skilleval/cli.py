"""Entry point: verbs (sql, plugins, validate, package, ...) are dispatched here; anything
else is a Hydra run (`skilleval +experiment=trigger_eval backend=stub ...`).

Exit codes: 0 ran · 2 bad input or config (one line on stderr, no traceback) · 3 the
harness could not produce valid measurements.
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import Callable

from skilleval.errors import SkillevalError

_exit_codes: list[int] = []


def _verbs() -> dict[str, Callable[[list[str]], int]]:
    from skilleval import commands

    verbs = dict(commands.VERBS)
    verbs.update(_optional_verbs())
    return verbs


def _optional_verbs() -> dict[str, Callable[[list[str]], int]]:
    """Verbs implemented by modules that may not be importable in every install."""
    out: dict[str, Callable[[list[str]], int]] = {}

    def lazy(module: str, func: str) -> Callable[[list[str]], int]:
        def call(argv: list[str]) -> int:
            import importlib

            return getattr(importlib.import_module(module), func)(argv)

        return call

    out["serve-sim"] = lazy("skilleval.sim.server", "serve_sim_main")
    out["import"] = lazy("skilleval.functional.importer", "import_main")
    out["check-evals"] = lazy("skilleval.evalsets.cli", "check_evals_main")
    out["review-evals"] = lazy("skilleval.evalsets.cli", "review_evals_main")
    return out


def _hydra_main() -> None:
    import hydra
    from omegaconf import DictConfig

    from skilleval.app import run_job
    from skilleval.registry import default_registry, get_plugin_manager

    @hydra.main(version_base="1.3", config_path="pkg://skilleval.conf", config_name="config")
    def _run(cfg: DictConfig) -> None:
        # Our errors are reported here, one line each, rather than raised through Hydra
        # (which would print "Error executing job with overrides: ..." first and stop a
        # sweep); the process exits with the worst code of all jobs.
        try:
            _exit_codes.append(run_job(cfg, default_registry(), get_plugin_manager()))
        except SkillevalError as exc:
            _report(exc)
            _exit_codes.append(exc.exit_code)

    _run()


def _one_line(exc: BaseException) -> str:
    """Hydra's errors span several lines (option lists); fold them into one."""
    text = str(exc).strip()
    while not text and exc.__cause__ is not None:  # Hydra wraps parse errors in empty exceptions
        exc = exc.__cause__
        text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for i, ln in enumerate(lines):  # the search path dump helps nobody
        if ln.startswith("Config search path"):
            lines = lines[:i]
            break
    if len(lines) > 1 and lines[1].lower().startswith("available options"):
        return f"{lines[0]} (valid: {', '.join(lines[2:])})"
    return "; ".join(lines)


def _report(exc: SkillevalError) -> None:
    if exc.exit_code:
        print(f"skilleval: error: {exc}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    verbs = _verbs()
    try:
        if args and args[0] in verbs:
            sys.exit(verbs[args[0]](args[1:]))
        sys.exit(_run_hydra(args))
    except SkillevalError as exc:
        _report(exc)
        sys.exit(exc.exit_code)


def _run_hydra(args: list[str]) -> int:
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from skilleval.config import prepare_hydra

    prepare_hydra()
    # Let configuration errors reach us (instead of Hydra printing a trace and exiting 1).
    os.environ["HYDRA_FULL_ERROR"] = "1"
    warnings.filterwarnings("ignore", message=r"provider=hydra\.searchpath in main, path=.* is not available")
    sys.argv = [sys.argv[0], *args]
    _exit_codes.clear()
    try:
        _hydra_main()
    except SkillevalError:
        raise
    except (HydraException, OmegaConfBaseException) as exc:
        print(f"skilleval: config error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # Hydra wraps task errors; unwrap ours
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, SkillevalError):
            raise cause from None
        if isinstance(cause, (HydraException, OmegaConfBaseException)):
            print(f"skilleval: config error: {_one_line(cause)}", file=sys.stderr)
            return 2
        raise
    return max(_exit_codes, default=0)


if __name__ == "__main__":  # pragma: no cover
    main()
