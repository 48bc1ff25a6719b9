"""The non-Hydra verbs: `sql`, `plugins`, `validate`, `package`."""
from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import math
import sys
from pathlib import Path
from typing import Callable

from skilleval.terminal import PlainConsole
from rich.table import Column, Table

from skilleval.errors import UserError
from skilleval.terminal import json_visible, safe, visible, visible_line
from skilleval.cliargs import ArgParser as _Parser


def _json_value(value: object) -> object:
    """DuckDB sums come back as Decimal (HUGEINT); keep numbers numbers in JSON."""
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    return str(value)


def _finite(value: object) -> object:
    """NaN / infinity as null: ``NaN`` is not JSON, and jq or a browser would reject it."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def _csv_cell(value: object) -> object:
    """Lists and structs as JSON (not Python reprs) so a CSV reader can parse them back."""
    if isinstance(value, (list, dict)):
        return json.dumps(_finite(value), default=_json_value, ensure_ascii=False)
    return value


def sql_main(argv: list[str]) -> int:
    p = _Parser(prog="skilleval sql", description="Run one read-only SQL query over every result in the store. "
                "Views: runs, trials, queries (+ candidates, executions, grades, comparisons when present); "
                "a keyed view shows each key once (its newest row), <view>_all every row written; "
                "a run killed while running shows status 'stale'.")
    p.add_argument("query", help='e.g. "select outcome, count(*) from trials group by 1"')
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.add_argument("--store", help="store root (default: $SKILLEVAL_STORE or the per-user store)")
    args = p.parse_args(argv)
    import duckdb  # here, after --help: every verb and run imports this module

    from skilleval.store.catalog import Store, named_root

    store = Store(named_root(args.store))
    try:
        _read_only(args.query)
        result = store.query(args.query)
    except duckdb.Error as exc:
        views = ", ".join(store.tables()) or "none yet (run an experiment first)"
        first = str(exc).strip().splitlines()[0]
        raise UserError(f"SQL error: {first} (views: {views})") from None
    if not result.num_columns:  # empty, a comment, or a statement with no rows to show
        raise UserError("SQL: no query that returns rows (give a SELECT, e.g. "
                        "\"select count(*) from trials\")")
    rows = result.to_pylist()
    cols = result.column_names
    # piped or redirected, csv and json are data for programs, written exactly; on a terminal
    # they are read by a person, and stored text (queries, model output) must not run there
    tty = sys.stdout.isatty()
    if args.format == "json":
        text = json.dumps(_finite(rows), default=_json_value, ensure_ascii=False, indent=2, allow_nan=False)
        print(json_visible(text) if tty else text)
    elif args.format == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")  # shell pipelines, not RFC 4180 CRLF
        w.writerow([visible(c) for c in cols] if tty else cols)
        w.writerows([[visible(v) if tty and isinstance(v, str) else v for v in (_csv_cell(r[c]) for c in cols)]
                     for r in rows])
    else:
        # Cells fold instead of ending in "…"; piped, the table takes its natural width
        # (a pager or a file is not 80 columns wide, and a squeezed value is lost).
        table = Table(show_lines=False)
        for c in cols:
            table.add_column(safe(c), overflow="fold")
        for r in rows:
            table.add_row(*("" if r[c] is None else safe(r[c]) for c in cols))
        piped = not sys.stdout.isatty()
        PlainConsole(width=_natural_width(table) if piped else None, soft_wrap=piped).print(table)
        PlainConsole(stderr=True).print(f"[dim]{len(rows)} row(s)[/dim]")
    return 0


#: what `skilleval sql` runs: statements that only read (SELECT covers WITH, FROM-first,
#: VALUES, DESCRIBE, SHOW and SUMMARIZE)
_READING = ("SELECT", "EXPLAIN")


def _read_only(sql: str) -> None:
    """Refuse (exit 2) SQL that is not one statement that only reads. Why: the views read the
    store's own Parquet parts, so a COPY ... TO one of them replaced a part and lost its rows
    with exit 0; DROP VIEW printed "Success" and changed nothing; ATTACH made a file."""
    import duckdb

    statements = duckdb.connect().extract_statements(sql)
    if len(statements) > 1:
        raise UserError(f"SQL: {len(statements)} statements; skilleval sql runs one query at a time")
    kind = statements[0].type.name if statements else None
    if kind == "MULTI":  # what DuckDB makes of a PIVOT without its IN list (it makes a type first)
        raise UserError("SQL: a PIVOT without an IN list runs several statements; skilleval sql "
                        "runs one query: list the values, e.g. PIVOT (sum(v) FOR k IN ('a', 'b'))")
    if kind is not None and kind not in _READING:
        raise UserError(f"SQL: {kind} is not a query; skilleval sql only reads (SELECT, WITH, FROM, "
                        "DESCRIBE, SHOW, SUMMARIZE, EXPLAIN): the store is written by runs alone")


def _natural_width(table: Table) -> int:
    """The width `table` needs to show every cell on one line."""
    from rich.measure import Measurement

    wide = PlainConsole(width=1_000_000)
    return max(20, Measurement.get(wide, wide.options, table).maximum)


def plugins_main(argv: list[str]) -> int:
    from skilleval.registry import default_registry

    p = _Parser(prog="skilleval plugins", description="List every installed plugin option. Exit codes: 0 all usable, "
                "2 a name registered twice, an unusable component or a plugin that failed to load.")
    p.add_argument("--format", choices=["table", "json"], default="table")
    args = p.parse_args(argv)
    registry = default_registry()
    regs = registry.all()
    registry.warn_clashes("error")  # listed still, so the user can see what clashes with what
    # Unusable components and plugins that failed to load were warned about while loading;
    # listing them must not exit 0 either, or `skilleval plugins` in CI passes a broken install.
    from skilleval.registry import LOAD_FAILURES

    unusable = [r for r in regs if r.problem is not None]
    if unusable or LOAD_FAILURES:
        print(f"skilleval: error: {len(unusable)} unusable component(s), {len(LOAD_FAILURES)} "
              "plugin(s) failed to load (see the warnings above)", file=sys.stderr)
    code = 2 if registry.clashes or unusable or LOAD_FAILURES else 0
    if args.format == "json":
        print(json.dumps([{"kind": r.kind, "name": r.name, "distribution": r.distribution,
                           "version": r.version, "plugin": r.plugin, "help": r.help,
                           "problem": r.problem} for r in regs], indent=2))
        return code
    # Names never shrink to "…" (they are what a user types); a long description folds.
    table = Table(*(Column(h, no_wrap=True) for h in ("kind", "name", "distribution", "version")),
                  Column("description", overflow="fold"))
    for r in regs:
        table.add_row(*(safe(x) for x in (r.kind, r.name, r.distribution, r.version, r.help)))
    PlainConsole().print(table)
    return code


def validate_main(argv: list[str]) -> int:
    from skilleval.skills import skill_md_path, validate_skill

    p = _Parser(prog="skilleval validate", description="Check a skill folder's SKILL.md "
                "(skill-creator's rules; Claude Code's extra keys are warnings). Exit codes: "
                "0 valid (warnings allowed), 2 invalid (every problem listed on stderr).")
    p.add_argument("path")
    args = p.parse_args(argv)
    problems = validate_skill(args.path)
    where = skill_md_path(args.path)  # each line says where, as a run's refusal does
    for prob in problems:
        print(f"{prob.level}: {visible_line(prob.located(where))}", file=sys.stderr)
    errors = [x for x in problems if x.level == "error"]
    if errors:  # an invalid skill is bad input: the documented code is 2, not 1 (a failed gate)
        return UserError.exit_code
    print("Skill is valid!")
    return 0


def package_main(argv: list[str]) -> int:
    from skilleval.packaging import package_skill
    from skilleval.skills import package_files

    p = _Parser(prog="skilleval package", description="Write a deterministic .skill zip "
                "(dotfiles, .git, .env, __pycache__ and the top-level evals/ left out).")
    p.add_argument("path")
    p.add_argument("-o", "--output-dir", default=".")
    args = p.parse_args(argv)
    out = package_skill(args.path, args.output_dir)
    print(visible_line(out))  # a hostile folder name must not drive the terminal
    root = Path(args.path).resolve()
    root = root.parent if root.name == "SKILL.md" else root
    for f in package_files(root):  # a hard link may be a file from outside the skill folder
        links = f.stat().st_nlink
        if links > 1:
            print(f"note: {visible_line(f)} has {links} hard links; its content may be shared "
                  "with a file outside the skill folder", file=sys.stderr)
    return 0


VERBS: dict[str, Callable[[list[str]], int]] = {
    "sql": sql_main,
    "plugins": plugins_main,
    "validate": validate_main,
    "package": package_main,
}
