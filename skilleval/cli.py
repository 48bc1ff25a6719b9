"""Entry point: verbs (sql, plugins, validate, package, ...) are dispatched here; anything
else is a Hydra run (`skilleval +experiment=trigger_eval backend=stub ...`).

Exit codes (README lists them too):
  0   ran, and every gate passed
  1   a gate failed (one line per failed gate: what, measured, required)
  2   bad input or config (one line on stderr, no traceback, before any call)
  3   could not measure (the harness produced no valid measurements)
  4   stopped by the budget
  130 interrupted by Ctrl-C (one line; the run is marked interrupted)
"""
from __future__ import annotations

import os
import re
import sys
import warnings
from typing import Any, Callable

from skilleval import job_exit
from skilleval.errors import SkillevalError
from skilleval.sweep_errors import SWEEP_ERRORS
from skilleval.terminal import visible_line

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
    out["view"] = lazy("skilleval.viewer.cli", "view_main")
    out["report"] = lazy("skilleval.viewer.cli", "report_main")
    out["check-evals"] = lazy("skilleval.evalsets.cli", "check_evals_main")
    out["review-evals"] = lazy("skilleval.evalsets.cli", "review_evals_main")
    out["diff"] = lazy("skilleval.rundiff.cli", "diff_main")
    out["store"] = lazy("skilleval.store.verbs", "store_main")
    return out


def _hydra_main() -> None:
    import hydra
    from omegaconf import DictConfig

    from skilleval.app import run_job
    from skilleval.registry import default_plugin_manager, default_registry

    @hydra.main(version_base="1.3", config_path="pkg://skilleval.conf", config_name="config")
    def _run(cfg: DictConfig) -> None:
        # Our errors are reported here, one line each, rather than raised through Hydra
        # (which would print "Error executing job with overrides: ..." first and stop a
        # sweep); the process exits with the worst code of all jobs.
        error = None
        try:
            registry = default_registry()
            registry.require_unique()
            code = run_job(cfg, registry, default_plugin_manager())
        except SkillevalError as exc:
            code, error = exc.exit_code, (visible_line(exc) if exc.exit_code else None)
        job_num = _multirun_job_num()
        if error is not None and job_num is not None:
            _refused_job_row(cfg, job_num, code)
        # a launcher may run this job in another process: its code, error line and row of
        # the sweep table then go to the CLI's process (job_exit), which prints them
        from skilleval.sweep_table import FINISHED

        row = next((j.to_wire() for j in reversed(FINISHED) if j.job_num == (job_num or 0)), None)
        if not job_exit.record(code, error, job_num or 0, row) and error is not None:
            _report_line(error, job_num)
        _exit_codes.append(code)

    _run()


def _refused_job_row(cfg: Any, job_num: int, code: int) -> None:
    """A sweep job refused before it started has its row in the sweep's table too: without
    it the table counted one job fewer and showed the swept value as shared by every job."""
    from skilleval.app import sweep_identity
    from skilleval.sweep_table import FINISHED, JobOutcome

    if any(j.job_num == job_num for j in FINISHED):  # it started: run_job recorded it
        return
    sweep_id, _, overrides, _ = sweep_identity()
    experiment = str((cfg.get("experiment") or {}).get("name", ""))
    FINISHED.append(JobOutcome(job_num, "", sweep_id, experiment, f"refused (exit {code})", overrides))


def _one_line(exc: BaseException) -> str:
    """Hydra's errors span several lines (option lists); fold them into one."""
    text = str(exc).strip()
    while not text and exc.__cause__ is not None:  # Hydra wraps parse errors in empty exceptions
        exc = exc.__cause__
        text = str(exc).strip()
    special = _struct_hint(text, exc.__cause__)
    if special:
        return special
    # Hydra's "+key" hint leads to a setting nothing reads (strict.py catches known groups)
    lines = [ln.strip() for ln in text.splitlines()
             if ln.strip() and not ln.strip().startswith("To append to your config use")]
    for i, ln in enumerate(lines):  # the search path dump helps nobody
        if ln.startswith("Config search path"):
            lines = lines[:i]
            break
    if len(lines) > 1 and lines[1].lower().startswith("available options"):
        return f"{lines[0]} (valid: {', '.join(lines[2:])})"
    load = re.search(r"Could not load '(\w+)/([^']+)'", lines[0]) if lines else None
    if load:  # e.g. reporter=[console,nosuch]: a list names no options the way a choice does
        from skilleval.registry import default_registry

        names = default_registry().names(load.group(1))
        if names:
            return f"{load.group(1)} {load.group(2)!r} does not exist (valid: {', '.join(names)})"
    lexer = re.match(r"LexerNoViableAltException: ([\w.+~@/-]+)=(.*)$", lines[0]) if lines else None
    if lexer:  # e.g. gate.baseline=latest~1: the grammar reads ~ and friends, quotes pass them
        key, value = lexer.groups()
        return (f"{key}={value}: Hydra cannot parse this value; quote it, as in "
                f"{key}='{value}' (inside the shell's own quotes: \"{key}='{value}'\")")
    return "; ".join(lines)


def _struct_hint(text: str, cause: BaseException | None) -> str | None:
    """What to write instead, for Hydra's "Could not override 'KEY'" (a key the composed
    config lacks) and "Error merging override" (a value of the wrong type), or None."""
    first = str(cause or "").strip().splitlines()
    if text.startswith("Error merging override") and first:  # e.g. backend.latency_ms=abc
        return f"{text.splitlines()[0]}: {first[0]}"
    hint = re.search(r"^To append to your config use (\+\S+)", text, re.M)
    missing = re.search(r"full_key: (\S+)", str(cause or ""))
    if not (hint and missing and first and "is not in struct" in first[0]):
        return None
    key, full = hint.group(1).lstrip("+").split("=", 1)[0], missing.group(1)
    if full.startswith(key + "."):
        # a known mapping setting (strict.py let its key through) given keys its default
        # lacks, e.g. functional.arm_overrides={without_skill:{max_turns:5}}: the + form works
        return (f"{text.splitlines()[0]} ({first[0]}): a value that adds keys to an empty setting "
                f"needs a leading +, as in {hint.group(1)}")
    from skilleval.registry import _MULTI  # groups where several options are chosen at once

    group, _, option = full.partition(".")
    if option and group in _MULTI:  # reporter.junit.filename without junit chosen
        return f"{key}: {option} is not one of this run's {group}s; add it, as in {group}=[console,{option}]"
    from skilleval.strict import experiments_with_group

    owners = experiments_with_group(group) if not option else []
    if owners:  # a whole section this experiment lacks (optimize.* on trigger_eval)
        return (f"{key}: this experiment has no {group} settings ({group}.* belongs to "
                f"{', '.join(f'+experiment={o}' for o in owners)})")
    return f"{key}: this run's configuration has no {full}"


def _version_text() -> str:
    """skilleval's version, then every distribution that registers plugins, with what."""
    from importlib import metadata

    from skilleval.registry import LOAD_FAILURES, default_registry

    lines = [f"skilleval {metadata.version('skilleval')}", "plugins:"]
    by_dist: dict[tuple[str, str], set[str]] = {}
    for r in default_registry().all():
        by_dist.setdefault((r.distribution, r.version), set()).add(f"{r.kind}={r.name}")
    for (dist, version), names in sorted(by_dist.items()):
        lines.append(f"  {dist} {version}: {', '.join(sorted(names))}")
    for f in LOAD_FAILURES:
        lines.append(f"  {f.distribution}: failed to load ({f.error})")
    return "\n".join(lines)


def _multirun_job_num() -> int | None:
    """This job's number when Hydra runs a sweep (``-m``), else None."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if not HydraConfig.initialized() or HydraConfig.get().mode != RunMode.MULTIRUN:
        return None
    return int(HydraConfig.get().job.num)


def _report(exc: SkillevalError) -> None:
    if exc.exit_code:
        print(f"skilleval: error: {visible_line(exc)}", file=sys.stderr)


def _report_line(line: str, sweep_job: int | None) -> None:
    """One line on stderr; in a sweep, an error identical to an earlier job's is only counted
    (``sweep_errors``: the sweep ends saying in how many jobs it happened)."""
    if sweep_job is None or SWEEP_ERRORS.first_time(line, sweep_job):
        print(f"skilleval: error: {line}", file=sys.stderr)


def _route_rich_broken_pipe() -> None:
    """rich exits 1 silently when its pipe closes (``Console.on_broken_pipe``); send that
    through our one handler so every verb reports a closed pipe the same way (exit 2)."""
    from rich.console import Console

    def on_broken_pipe(self: Console) -> None:
        self.quiet = True
        raise BrokenPipeError

    Console.on_broken_pipe = on_broken_pipe  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    _route_rich_broken_pipe()
    if args[:1] in (["--version"], ["-V"]):
        if len(args) > 1:  # `--version extra` is a typo, not a request for the version
            print(f"skilleval: error: {args[0]} takes no arguments, got {visible_line(' '.join(args[1:]))}",
                  file=sys.stderr)
            sys.exit(2)
        print(_version_text())
        return
    verbs = _verbs()
    try:
        if args and args[0] in verbs:
            code = verbs[args[0]](args[1:])
        elif args and re.fullmatch(r"[A-Za-z][\w-]*", args[0]):
            _unknown_verb(args[0], verbs)
        else:
            code = _run_hydra(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        sys.exit(code)
    except SkillevalError as exc:
        _report(exc)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        # `skilleval --help | head`: the reader left. Point stdout at /dev/null so the
        # interpreter's final flush does not raise again, and say it in one line.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        print("skilleval: error: output closed early (broken pipe)", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        _interrupted()
    except Exception as exc:
        from skilleval.interrupts import caused_by_interrupt

        if not caused_by_interrupt(exc):  # DuckDB turns a Ctrl-C mid-query into its own error
            raise
        _interrupted()


#: Hydra's own command-line flags (hydra._internal.utils.get_args_parser)
_HYDRA_FLAGS = ("--cfg", "--config-dir", "--config-name", "--config-path", "--experimental-rerun",
                "--help", "--hydra-help", "--info", "--multirun", "--package", "--resolve", "--run",
                "--shell-completion", "--version")


def _refuse_abbreviated_flags(args: list[str]) -> None:
    """Hydra's argparse accepts any unambiguous prefix of its flags: `skilleval --versio`
    printed Hydra's version ("Hydra 1.3.8") as if it were ours. A prefix is refused, naming
    the flag it abbreviates."""
    from skilleval.errors import UserError

    for arg in args:
        flag = arg.split("=", 1)[0]
        if not flag.startswith("--") or flag in _HYDRA_FLAGS:
            continue
        whole = [f for f in _HYDRA_FLAGS if f.startswith(flag)]
        if whole:
            raise UserError(f"unknown option {visible_line(flag)}: did you mean {whole[0]}? "
                            "(options are not abbreviated)")


def _raised_by_hydra(exc: BaseException) -> bool:
    """True when the last frame of ours or a library's that raised `exc` is Hydra's (its own
    folder and config writing), not skilleval's."""
    tb, last = exc.__traceback__, None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename.replace("\\", "/")
        if "/hydra/" in name or "/skilleval/" in name:
            last = name
        tb = tb.tb_next
    return last is not None and "/hydra/" in last


def _interrupted() -> None:
    # One line, no traceback; run_job has already marked the run "interrupted" and
    # flushed every finished trial, which a rerun reuses.
    print("skilleval: interrupted (Ctrl-C); finished work is kept in the store and a rerun "
          "reuses it", file=sys.stderr)
    sys.exit(130)


def _unknown_verb(word: str, verbs: dict[str, Any]) -> None:
    """`skilleval plugin` or `skilleval trigger_eval`: a bare word is no Hydra override (Hydra
    answers "Error parsing override ...; missing EQUAL"); say what was meant instead."""
    import difflib
    from importlib.resources import files

    from skilleval.errors import UserError

    experiments = {p.name[:-5] for p in (files("skilleval.conf") / "experiment").iterdir()
                   if p.name.endswith(".yaml")}
    if word in experiments:
        raise UserError(f"unknown command '{word}': to run that experiment, skilleval +experiment={word}")
    near = difflib.get_close_matches(word, list(verbs), n=1)
    hint = f"did you mean {near[0]}? " if near else ""
    raise UserError(f"unknown command '{word}': {hint}commands: {', '.join(sorted(verbs))}; "
                    "or run an experiment: skilleval +experiment=NAME (skilleval --help)")


def _run_hydra(args: list[str]) -> int:
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from skilleval.config import prepare_hydra
    from skilleval.hydra_mode import single_composition
    from skilleval.hydra_store import shared_config_store
    from skilleval.sweep_precheck import SweepRefused

    prepare_hydra()
    from skilleval.strict import check_overrides
    from skilleval.variants.expand import expand_variant_args

    args = expand_variant_args(args)  # variant='glob(*)' -> the variants file's names
    if {"--help", "-h", "--hydra-help"} & set(args):  # help still answers, and says this
        from skilleval.registry import default_registry

        default_registry().warn_clashes("warning")
    check_overrides(args)
    _refuse_abbreviated_flags(args)
    # Let configuration errors reach us (instead of Hydra printing a trace and exiting 1).
    os.environ["HYDRA_FULL_ERROR"] = "1"
    warnings.filterwarnings("ignore", message=r"provider=hydra\.searchpath in main, path=.* is not available")
    # ... and in a launcher's worker processes (joblib's loky, submitit), which compose the
    # config again: each printed it with its `warnings.warn(` line on stderr
    quiet = "ignore:provider=hydra.searchpath in main:UserWarning"  # -W: a literal prefix, no ','
    if quiet not in os.environ.get("PYTHONWARNINGS", ""):
        os.environ["PYTHONWARNINGS"] = ",".join(filter(None, (os.environ.get("PYTHONWARNINGS"), quiet)))
    sys.argv = [sys.argv[0], *args]
    _exit_codes.clear()
    from skilleval.sweep_table import FINISHED, JobOutcome, print_sweep_table

    FINISHED.clear()
    SWEEP_ERRORS.clear()
    try:
        with job_exit.collecting() as remote, single_composition(args), shared_config_store():
            _hydra_main()
        _exit_codes.extend(remote.codes)
        FINISHED.extend(JobOutcome.from_wire(o) for o in remote.outcomes)
        for job_num, line in remote.errors:
            _report_line(line, job_num)
    except SkillevalError:
        raise
    except SweepRefused as exc:  # a sweep job's config is wrong: no job was started
        raise exc.error from None
    except (HydraException, OmegaConfBaseException) as exc:
        print(f"skilleval: config error: {visible_line(_one_line(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # after Hydra's: its MissingConfigException is an IOError
        if exc.filename is None or not _raised_by_hydra(exc):  # a closed pipe has no file
            raise
        # Hydra makes the run's folder (hydra.run.dir / $SKILLEVAL_OUTPUTS) before our job
        # starts: a path that is a file, or a read-only one, is bad input, not a crash
        where = f" {exc.filename}" if exc.filename else ""
        print(f"skilleval: error: cannot make the run's output folder{where}: "
              f"{exc.strerror or exc} (set hydra.run.dir= or $SKILLEVAL_OUTPUTS to a writable "
              "folder)", file=sys.stderr)
        return 2
    except ValueError as exc:
        if "can be specified" not in str(exc):  # Hydra's "Only one of --run, --multirun, --cfg..."
            raise
        print(f"skilleval: config error: {visible_line(_one_line(exc))}", file=sys.stderr)
        return 2
    except Exception as exc:  # Hydra wraps task errors; unwrap ours
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, SkillevalError):
            raise cause from None
        if isinstance(cause, (HydraException, OmegaConfBaseException)):
            print(f"skilleval: config error: {visible_line(_one_line(cause))}", file=sys.stderr)
            return 2
        raise
    SWEEP_ERRORS.print_repeated(len(_exit_codes))
    if len(_exit_codes) > 1:  # a sweep ends with one table across its jobs
        from skilleval.terminal import PlainConsole

        print_sweep_table(FINISHED, PlainConsole(soft_wrap=True))
    return max(_exit_codes, default=0)


if __name__ == "__main__":  # pragma: no cover
    main()
