"""``skilleval store check``: list what is wrong with a store, one line per problem.

Problems: parts that cannot be read (every page read, checksums verified), parts already
quarantined, half-written ``*.parquet.tmp`` files a killed writer left, and runs marked
``running`` whose process is gone (stale). Exit 0 when clean, 1 when problems were found.
``--quarantine`` moves unreadable parts aside (readers do that on their own as well).
"""
from __future__ import annotations

import sys
from pathlib import Path

from skilleval.errors import UserError
from skilleval.store.health import QUARANTINE, find_problems, quarantine
from skilleval.terminal import visible_line
from skilleval.cliargs import ArgParser as _Parser


def check_main(argv: list[str]) -> int:
    from skilleval.store.catalog import resolve_root

    p = _Parser(prog="skilleval store check", description=__doc__.split("\n\n")[0].replace("``", "")
                + " Exit codes: 0 clean, 1 problems found (listed), 2 bad input.")
    p.add_argument("--store", help="store root (default: $SKILLEVAL_STORE or the per-user store)")
    p.add_argument("--quarantine", action="store_true", help="move unreadable parts to _quarantine/")
    args = p.parse_args(argv)
    try:
        resolved = resolve_root(args.store)
    except (RuntimeError, OSError) as exc:
        raise UserError(f"store root {args.store}: {exc}") from None
    if isinstance(resolved, str):  # an object-store URL: parts are checked where they are written
        raise UserError(f"--store {resolved}: `store check` reads a local store only")
    root = Path(resolved)
    if not root.is_dir():
        raise UserError(f"store not found: {root}")
    problems: list[str] = []
    unreadable = find_problems(root, deep=True)
    for bad in unreadable:
        where = bad.path.relative_to(root)
        if args.quarantine:
            dest = quarantine(root, bad, announce=False)
            problems.append(f"unreadable part {where}: {bad.reason} (quarantined to {dest})")
        else:
            problems.append(f"unreadable part {where}: {bad.reason}")
    qdir = root / QUARANTINE
    if qdir.is_dir():
        problems += [f"quarantined part {q.relative_to(root)}" for q in sorted(qdir.rglob("*.corrupt"))]
    problems += [f"half-written file {t.relative_to(root)} (a writer was killed mid-flush)"
                 for t in sorted(root.glob("*/**/*.parquet.tmp"))]
    if unreadable and not args.quarantine:  # reading the runs view would quarantine them now
        problems.append("stale runs not checked: the views cannot be read before the unreadable "
                        "parts are moved aside (run again with --quarantine)")
    else:
        problems += _stale_runs(root)
    for line in problems:
        print(visible_line(line))
    print(f"{len(problems)} problem(s) in {visible_line(root)}", file=sys.stderr)
    return 1 if problems else 0


def _stale_runs(root: Path) -> list[str]:
    """Runs whose latest status is ``running`` but whose liveness lease nobody holds."""
    from skilleval.store.catalog import Store

    store = Store(root)
    if "runs" not in store.tables():
        return []
    rows = store.query("SELECT run_id FROM runs WHERE status = 'stale' ORDER BY run_id").to_pylist()
    return [f"stale run {r['run_id']} (status running, no heartbeat, process gone)" for r in rows]
