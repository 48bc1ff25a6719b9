"""``skilleval import PATH``: load a skill-creator workspace into the store.

Accepts every layout skill-creator produces (reference §7.2, §15.1):

* ``run-N``: ``eval-X/<config>/run-N/{outputs/, grading.json, timing.json}``;
* flat: ``eval-X/<config>/{outputs/, grading.json}`` (no ``run-*``; skill-creator's aggregator
  silently finds nothing here, B13);
* the legacy ``runs/`` prefix, a workspace holding ``iteration-N/`` folders, and eval folders
  with descriptive names (not only ``eval-*``).

``eval_metadata.json`` is read at the run, configuration *and* eval level (B15). Each run
becomes one ``executions`` row and one ``grades`` row per expectation (judge ``imported``);
output files are hashed and kept in the blob store. Re-importing the same workspace adds
nothing: rows are keyed by content and existing keys are skipped.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from skilleval.errors import UserError
from skilleval.execution import OutputFile, store_blobs
from skilleval.functional.import_files import WorkspaceFiles
from skilleval.functional.records import digest, now
from skilleval.functional.workspace import BOOKKEEPING, DISPLACED, ERROR_FILE
from skilleval.store.catalog import Store, resolve_root
from skilleval.store.schema import SCHEMA_VERSION
from skilleval.terminal import visible_line
from skilleval.textfiles import shown_name
from skilleval.cliargs import ArgParser as _Parser

ROLE = {"with_skill": "primary", "new_skill": "primary", "without_skill": "baseline", "old_skill": "baseline"}


def _is_run(d: Path) -> bool:
    return (d / "grading.json").is_file() or (d / "outputs").is_dir()


def _runs_of(config: Path) -> list[tuple[int, Path]]:
    runs = []
    for r in config.iterdir():
        m = re.fullmatch(r"run-(\d+)", r.name)
        if r.is_dir() and m:
            runs.append((int(m.group(1)), r))
    if runs:
        return sorted(runs)
    return [(1, config)] if _is_run(config) else []


def discover(root: Path) -> list[dict[str, Any]]:
    """Every run under a workspace: {iteration, eval_dir, config, run_number, run_dir}."""
    if not root.is_dir():
        raise UserError(f"{root} is a file, not a workspace folder (give the folder that holds "
                        "iteration-N/ or eval-*/)" if root.is_file() else f"workspace not found: {root}")
    bases = [(None, root / "runs" if (root / "runs").is_dir() else root)]
    its = sorted((int(m.group(1)), p) for p in root.iterdir()
                 if p.is_dir() and (m := re.fullmatch(r"iteration-(\d+)", p.name)))
    if its:
        bases = [(n, p / "runs" if (p / "runs").is_dir() else p) for n, p in its]
    found = []
    for iteration, base in bases:
        for ev in sorted((p for p in base.iterdir() if p.is_dir()), key=_natural):
            for cfg in sorted(p for p in ev.iterdir() if p.is_dir() and p.name != "outputs"):
                for num, run in _runs_of(cfg):
                    found.append({"iteration": iteration, "eval_dir": ev, "config": cfg.name,
                                  "run_number": num, "run_dir": run})
    return found


def unread_run_folders(runs: list[dict[str, Any]]) -> list[str]:
    """Folders beside the runs `discover` found that look like runs (a grading.json or an
    outputs/ folder) but are not read, e.g. ``run-a`` (not ``run-<number>``): an import that
    dropped them without a word said "imported 8 of 8 runs". The walk follows no symlink (a
    hostile workspace may link to /)."""
    found = {r["run_dir"] for r in runs}
    unread = []
    for base in sorted({r["eval_dir"].parent for r in runs}):
        for dirpath, dirnames, _ in os.walk(base):
            d = Path(dirpath)
            if d in found or d.name == "outputs":
                dirnames.clear()  # a read run's insides are its own
            elif d != base and _is_run(d) and not any(d in f.parents for f in found):
                unread.append(d.relative_to(base).as_posix())
                dirnames.clear()
    return sorted(unread)


def _natural(p: Path) -> list[Any]:
    """eval-2 before eval-10 (skill-creator's plain string sort gets this wrong, B13)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", p.name)]


def _metadata(run: dict[str, Any], files: WorkspaceFiles) -> dict[str, Any]:
    for d in (run["run_dir"], run["run_dir"].parent, run["eval_dir"]):
        meta = files.record(d / "eval_metadata.json")
        if meta:
            return meta
    return {}


def _skill_of(root: Path) -> str | None:
    """The skill a workspace measured when ``--skill`` is not given: a benchmark.json's
    ``metadata.skill_name``, else skill-creator's naming (``<skill-name>-workspace``)."""
    for bench in sorted(root.glob("iteration-*/benchmark.json")) + [root / "benchmark.json"]:
        try:
            name = json.loads(bench.read_text(encoding="utf-8"))["metadata"]["skill_name"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(name, str) and name and name != "<skill-name>":
            return name
    name = root.resolve().name
    return name[: -len("-workspace")] if name.endswith("-workspace") and len(name) > 10 else None


def import_workspace(root: Path, store: Store, skill: str | None = None) -> dict[str, Any]:
    runs = discover(root)
    if not runs:
        raise UserError(f"{root}: no runs found (expected eval folders holding <config>/run-N/ or "
                        "<config>/outputs with grading.json)")
    skill = skill or _skill_of(root)
    sweep_id = "import-" + dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + \
        hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:8]
    # One run per iteration: each iteration-N measured another version of the skill, so its
    # executions are not more repeats of the previous iteration's evals.
    run_ids = {it: sweep_id if it is None else f"{sweep_id}-iteration-{it}"
               for it in dict.fromkeys(r["iteration"] for r in runs)}
    exec_rows, grade_rows, skipped = [], [], 0
    files = WorkspaceFiles(root)
    for run in runs:
        run_id = run_ids[run["iteration"]]
        ident = {"run_id": run_id, "sweep_id": sweep_id, "job_num": 0, "experiment": "import",
                 "schema_version": SCHEMA_VERSION}
        d: Path = run["run_dir"]
        grading = files.record(d / "grading.json")
        timing = files.record(d / "timing.json")
        failed = files.record(d / ERROR_FILE) or None  # our export of an errored run: no grades, not "ok"
        meta = _metadata(run, files)
        m = re.fullmatch(r"eval-(\d+)(?:-.*)?", run["eval_dir"].name)
        eval_id = str(meta.get("eval_id", m.group(1) if m else run["eval_dir"].name))
        eval_name = str(meta.get("eval_name") or run["eval_dir"].name.removeprefix("eval-"))
        outputs, on_disk = [], []
        out_dir = d / "outputs"
        if out_dir.is_dir():
            for f in files.outputs(out_dir):
                rel = f.relative_to(out_dir).as_posix()
                if rel in BOOKKEEPING:  # the transcript and metrics beside the model's files
                    continue
                h, size = hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_size
                on_disk.append(OutputFile("outputs/" + rel, h, size))
                # our export keeps a colliding output under _sandbox/ by its sandbox path: back
                outputs.append(OutputFile(rel.removeprefix(DISPLACED + "/") if rel.startswith(DISPLACED + "/")
                                          else "outputs/" + rel, h, size))
            store_blobs(d, tuple(on_disk), store.root / "blobs")
        transcript = ""
        for t in (out_dir / "transcript.md", d / "transcript.md"):
            text = files.text(t)
            if text is not None:
                transcript = text
                break
        em = grading.get("execution_metrics") or {}
        gt = grading.get("timing") or {}
        seconds = gt.get("total_duration_seconds") or timing.get("total_duration_seconds") or 0.0
        tokens = timing.get("total_tokens") or 0
        key = digest("import", str(d.resolve()), grading, timing, [o.sha256 for o in outputs])
        label = (f"iteration-{run['iteration']}/" if run["iteration"] else "") + \
            f"{run['eval_dir'].name}/{run['config']}/run-{run['run_number']}"
        exec_rows.append({
            **ident, "ts": now(), "key": key, "backend": "imported", "model": None, "skill": skill,
            "skill_hash": None, "arm": run["config"], "role": ROLE.get(run["config"], "other"),
            "eval_id": eval_id, "eval_name": eval_name, "repeat": run["run_number"] - 1,
            "prompt": meta.get("prompt"),
            "status": str(failed.get("status") or "error") if failed else "ok", "skill_fired": None, "fired_skills": [],
            "duration_s": float(seconds), "input_tokens": None, "output_tokens": None,
            "total_tokens": int(tokens), "cost_usd": None,
            "tool_calls_json": json.dumps(em.get("tool_calls") or {}),
            "total_tool_calls": int(em.get("total_tool_calls") or 0), "turns": em.get("total_steps"),
            "errors": int(em.get("errors_encountered") or 0),
            "outputs": [{"path": o.path, "sha256": o.sha256, "size": o.size} for o in outputs],
            "transcript": transcript, "settings_json": None, "effective_json": None,
            "error": str(failed.get("error")) if failed else None,
            "backend_version": None, "source": f"skill-creator:{root.resolve()}::{label}",
        })
        # schemas.md says expectations; SKILL.md's prose says assertions (issue #587): accept both.
        for i, e in enumerate([] if failed else grading.get("expectations") or grading.get("assertions") or []):
            if not isinstance(e, dict) or "text" not in e:
                skipped += 1
                continue
            passed = e.get("passed") if isinstance(e.get("passed"), bool) else None
            grade_rows.append({
                **ident, "ts": now(), "key": digest("import-grade", key, i, e.get("text")),
                "execution_key": key, "judge": "imported", "skill": skill, "arm": run["config"],
                "role": ROLE.get(run["config"], "other"), "eval_id": eval_id, "eval_name": eval_name,
                "repeat": run["run_number"] - 1, "expectation_index": i, "expectation": str(e["text"]),
                "spec_json": None, "status": "judge_error" if passed is None else "pass" if passed else "fail",
                "passed": passed, "evidence": str(e.get("evidence") or ""),
                "judge_error": None if passed is not None else "no boolean 'passed' in grading.json",
                "samples": 1, "agreement": 1.0, "disagreement": False,
                "claims_json": json.dumps(grading.get("claims") or []),
                "eval_feedback_json": json.dumps(grading.get("eval_feedback")) if grading.get("eval_feedback") else None,
                "user_notes_json": json.dumps(grading.get("user_notes_summary")) if grading.get("user_notes_summary") else None,
                "judge_calls": 0, "grader_seconds": gt.get("grader_duration_seconds"),
                "source": f"skill-creator:{label}",
            })
    exec_rows, grade_rows = _text_only(exec_rows), _text_only(grade_rows)
    known_e = set(store.lookup("executions", "key", [r["key"] for r in exec_rows]).column("key").to_pylist())
    known_g = set(store.lookup("grades", "key", [r["key"] for r in grade_rows]).column("key").to_pylist())
    new_e = [r for r in exec_rows if r["key"] not in known_e]
    new_g = [r for r in grade_rows if r["key"] not in known_g]
    written = []
    for iteration, run_id in run_ids.items():
        e = [r for r in new_e if r["run_id"] == run_id]
        g = [r for r in new_g if r["run_id"] == run_id]
        if not (e or g):
            continue
        with store.writer("executions", "import", run_id) as w:
            w.write(e)
        with store.writer("grades", "import", run_id) as w:
            w.write(g)
        folder = root if iteration is None else next(r["run_dir"] for r in runs if r["iteration"] == iteration) \
            .relative_to(root).parts[0]
        _write_run_row(store, run_id, sweep_id, root if iteration is None else root / folder, root, skill, e, g)
        written.append(run_id)
    return {"runs": len(exec_rows), "new_runs": len(new_e), "grades": len(grade_rows),
            "new_grades": len(new_g), "skipped_expectations": skipped,
            "run_id": written[-1] if written else None, "run_ids": written,
            "skipped_files": sorted(set(files.skipped)), "unread_runs": unread_run_folders(runs),
            "evals": len({r["eval_id"] for r in exec_rows}),
            "configurations": sorted({r["arm"] for r in exec_rows})}


def _text_only(value: Any) -> Any:
    """Folder and file names that are not UTF-8 reach Python as lone surrogates, which the
    store (Parquet strings are UTF-8) cannot hold: their bytes are kept as ``\\xff`` escapes."""
    if isinstance(value, str):
        return shown_name(value)
    if isinstance(value, dict):
        return {k: _text_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_text_only(v) for v in value]
    return value


def _write_run_row(store: Store, run_id: str, sweep_id: str, workspace: Path, root: Path,
                   skill: str | None, executions: list[dict[str, Any]], grades: list[dict[str, Any]]) -> None:
    """The imported run's ``runs`` row: without it, `skilleval view`, `report` and `diff` know
    no such run. It records the workspace (its outputs and feedback.json) and, as the output
    folder, the one holding its benchmark.json, as a functional run does."""
    summary: dict[str, Any] = {"workspace": str(workspace.resolve()), "imported_from": str(root.resolve()),
                               "executions": len(executions), "grades": len(grades),
                               "errored_executions": sum(1 for r in executions if r["status"] != "ok")}
    try:
        ds = json.loads((workspace / "benchmark.json").read_text(encoding="utf-8")).get("delta_stats") or {}
    except (OSError, ValueError, AttributeError):
        ds = {}
    if isinstance(ds, dict) and isinstance(ds.get("pass_rate"), dict):  # our own export's delta
        summary["delta"] = {"pass_rate": ds["pass_rate"], "confidence": ds.get("confidence")}
    with store.writer("runs", "import", run_id) as w:
        w.write([{"run_id": run_id, "sweep_id": sweep_id, "job_num": 0, "experiment": "import",
                  "schema_version": SCHEMA_VERSION, "ts": now(), "status": "done",
                  "backend": "imported", "model": None, "skill": skill,
                  "output_dir": str(workspace.resolve()), "overrides": [], "config_yaml": None,
                  "plugin_versions": None, "calls_made": 0, "calls_cached": 0, "cost_usd": 0.0,
                  "summary_json": json.dumps(summary), "variant": "", "description_hash": None}])


def import_main(argv: list[str]) -> int:
    ap = _Parser(prog="skilleval import",
                                 description="Load a skill-creator workspace (flat or run-N layout) into the "
                                 "store: one run per iteration-N folder (experiment 'import'), which "
                                 "`skilleval view`, `report` and `diff` then open like any run; the "
                                 "workspace's feedback.json stays where it is and the viewer edits it.")
    ap.add_argument("path", help="workspace folder (or one iteration-N folder)")
    ap.add_argument("--store", default=None, help="store root (default: $SKILLEVAL_STORE or the per-user store)")
    ap.add_argument("--skill", default=None, help="skill name to record on the rows (default: a "
                    "benchmark.json's skill_name, else the folder's name before -workspace)")
    args = ap.parse_args(argv)
    import skilleval.functional.records  # noqa: F401  (registers the table schemas)

    root = resolve_root(args.store)
    if "://" not in str(root):  # a local store must be writable: refused before reading anything
        from skilleval.config_checks import check_store_root

        root = check_store_root(Path(root))
    store = Store(root)
    res = import_workspace(Path(args.path).expanduser(), store, args.skill)
    print(f"imported {res['new_runs']} of {res['runs']} runs and {res['new_grades']} of {res['grades']} "
          f"grades ({res['evals']} evals; configurations: {', '.join(res['configurations'])}) "
          f"into {store.url}" + (f" as run {', '.join(res['run_ids'])}" if res["run_ids"] else
                                  " (nothing new: already in the store)")
          + (f"; {res['skipped_expectations']} expectation(s) without text skipped" if res["skipped_expectations"] else "")
          + (f"; skipped {len(res['skipped_files'])} path(s) that are not regular files inside the "
             f"workspace: {visible_line(', '.join(res['skipped_files'][:5]))}"
             + (", ..." if len(res["skipped_files"]) > 5 else "") if res["skipped_files"] else "")
          + (f"; not read, as not named run-<number>: {len(res['unread_runs'])} folder(s) holding a "
             f"run: {visible_line(', '.join(res['unread_runs'][:5]))}"
             + (", ..." if len(res["unread_runs"]) > 5 else "") if res["unread_runs"] else ""),
          file=sys.stderr)
    return 0
