"""`skilleval diff A B`: what changed between two runs, with paired statistics."""
from __future__ import annotations

import json
import sys

from skilleval.terminal import PlainConsole

from skilleval.cliargs import ArgParser as _Parser
from skilleval.errors import UserError


def diff_main(argv: list[str]) -> int:
    if any(x == "--sweep" or x.startswith("--sweep=") for x in argv):
        return _sweep(argv)
    p = _Parser(prog="skilleval diff", description=(
        "Compare two runs: flipped queries, per-query rate changes, exact McNemar test and paired "
        "intervals (trigger runs); per-eval and per-arm pass-rate deltas (functional runs). "
        "A and B are run ids, latest, latest~N (N runs before the latest; finished runs, "
        "a run whose gate failed included), or results.json / benchmark.json files "
        "(skill-creator's included). Exit 0 when compared, 2 on bad input. "
        "`skilleval diff --sweep SWEEP_ID` compares the jobs of one sweep."))
    p.add_argument("a", help="the before run (e.g. latest~1)")
    p.add_argument("b", help="the after run (e.g. latest)")
    p.add_argument("--format", choices=["table", "json"], default="table",
                   help="table (default) or json (flipped queries listed by text, before/after rates)")
    p.add_argument("--common", action="store_true",
                   help="compare only the queries / evals both runs share (and say how many)")
    p.add_argument("--experiment", help="latest / latest~N among runs of this experiment "
                   "(default: the experiment of the newest run with results to compare)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="level of the paired intervals and of the tests' reading (default 0.95)")
    p.add_argument("--store", help="store root (default: $SKILLEVAL_STORE or the per-user store)")
    args = p.parse_args(argv)
    if not 0 < args.confidence < 1:
        raise UserError(f"--confidence must be in (0, 1), got {args.confidence}")
    # after parsing, so `diff --help` and a bad argument need no pyarrow or DuckDB
    from skilleval.rundiff.compare import diff
    from skilleval.rundiff.render import render
    from skilleval.rundiff.sources import LATEST, MEASURED, RunData, completed_runs, kind_of, load
    from skilleval.store.catalog import Store, named_root

    store = Store(named_root(args.store))  # a --store that does not exist: "store not found"
    experiment = args.experiment
    if experiment is None and any(LATEST.match(x) for x in (args.a, args.b)):
        # latest~N counts runs of the newest comparable run's experiment: a functional run is
        # never "the run before" a trigger run, and a run with nothing to compare (attribute,
        # draft_evals) does not choose
        newest = next((r for r in completed_runs(store, statuses=MEASURED)
                       if kind_of(store, r) is not None), None)
        experiment = newest["experiment"] if newest else None

    def load_one(ref: str) -> RunData:
        # a run whose gate failed is a finished measurement: `latest` is that run
        try:
            return load(ref, store, experiment=experiment, statuses=MEASURED)
        except UserError as exc:  # the hint is about counting latest~N, so only for that
            if args.experiment is None and experiment is not None and LATEST.match(ref):
                raise UserError(f"{exc}{_other_experiments(store, experiment)}") from None
            raise
    a, b = load_one(args.a), load_one(args.b)
    result = diff(a, b, common=args.common, confidence=args.confidence)
    if args.format == "json":
        print(json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        render(result, PlainConsole(soft_wrap=False, width=None if sys.stdout.isatty() else 160))
    return 0


def _other_experiments(store: object, shown: str) -> str:
    """A hint when `latest~N` was counted in the newest run's experiment by default: after a
    functional_eval, `diff latest~1 latest` finds one run there while trigger runs wait."""
    from skilleval.rundiff.sources import MEASURED, kind_of, completed_runs

    counts: dict[str, int] = {}
    for run in completed_runs(store, statuses=MEASURED):  # type: ignore[arg-type]
        if run["experiment"] != shown and kind_of(store, run) is not None:  # type: ignore[arg-type]
            counts[run["experiment"]] = counts.get(run["experiment"], 0) + 1
    others = [f"{name} ({n})" for name, n in sorted(counts.items()) if name != shown and n >= 2]
    return (f" (counted among {shown} runs, the newest comparable run's experiment; "
            f"--experiment NAME counts another: {', '.join(others)})"
            if others else "")


def _sweep(argv: list[str]) -> int:
    """`--sweep` belongs to the optimiser's sweep summary; loaded only when asked for."""
    try:
        from skilleval.variants.summary import sweep_diff_main
    except ModuleNotFoundError as exc:
        if exc.name not in ("skilleval.variants", "skilleval.variants.summary"):
            raise
        raise UserError("skilleval diff --sweep: sweep comparison is not available in this install "
                        "(skilleval.variants.summary is missing)") from None
    return sweep_diff_main(argv)
