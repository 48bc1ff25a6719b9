"""The fork server behind the suite's short `skilleval` processes (client: tests/forked_cli.py).

Run as ``python tests/cli_fork_server.py``. It imports what every ``skilleval`` process
imports (Hydra, omegaconf, DuckDB, pyarrow with numpy, rich, skilleval's own modules) once,
then reads one JSON request per line on stdin. For each it forks a child that becomes the
command: the request's working directory, environment, argv and stdio (files), then
``skilleval.cli.main()`` and the interpreter's own exit sequence. It answers with the child's
pid, then with its exit code and CPU seconds, one JSON line each.

Why: the suite starts about 750 ``skilleval`` processes, and importing those libraries is
more than half of the CPU of a short one (a refused input, a stub run). A forked child is
still a process of its own (own pid, exit code, files, signals, environment, working
directory), and it runs exactly the code a fresh one runs after its imports. What it does
not repeat is interpreter start-up, so anything decided there (PYTHON* variables, the locale,
the hash seed) is the server's: the client keeps one server per start-up environment
(PYTHON*, LC_*, LANG) and sends each request to the one started with its own.
"""
from __future__ import annotations

import atexit
import io
import json
import os
import sys
import threading

# the streams as the interpreter made them, before main() rebinds the server's own
STARTUP_STREAMS = (sys.stdin, sys.stdout, sys.stderr)

# What a `skilleval` run imports (python -X importtime): the expensive part of every process.
import duckdb  # noqa: F401
import hydra  # noqa: F401
import omegaconf  # noqa: F401
import pyarrow  # noqa: F401
import pyarrow.parquet  # noqa: F401
import rich.console  # noqa: F401

import skilleval.app  # noqa: F401
import skilleval.cli
import skilleval.store.catalog  # noqa: F401


def _open_stdio(request: dict) -> None:
    """fd 0 from /dev/null, fds 1 and 2 into the request's files, and new sys.std* on them
    made as the server's own were at start-up (encoding, errors, buffering: PYTHONUNBUFFERED,
    PYTHONIOENCODING and the locale decide them; the server's streams are not terminals either)."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(f, fd)
        os.close(f)

    def like(fd: int, mode: str, model: io.TextIOWrapper) -> io.TextIOWrapper:
        unbuffered = isinstance(model.buffer, io.RawIOBase)  # -u / PYTHONUNBUFFERED
        raw = io.open(fd, mode + "b", buffering=0 if unbuffered else -1, closefd=False)
        return io.TextIOWrapper(raw, encoding=model.encoding, errors=model.errors,
                                line_buffering=model.line_buffering, write_through=model.write_through)
    sys.stdin = sys.__stdin__ = like(0, "r", STARTUP_STREAMS[0])
    sys.stdout = sys.__stdout__ = like(1, "w", STARTUP_STREAMS[1])
    sys.stderr = sys.__stderr__ = like(2, "w", STARTUP_STREAMS[2])


def _exit_code(exc: SystemExit) -> int:
    """As the interpreter maps SystemExit: None -> 0, an int -> itself, else printed and 1."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _child(request: dict) -> None:
    """Becomes `python -m skilleval.cli ARGS` and never returns."""
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _open_stdio(request)
        sys.argv = [skilleval.cli.__file__, *request["args"]]
        sys.path[0] = os.getcwd()  # `python -m` puts the working directory first
        try:
            skilleval.cli.main()  # as `python -m skilleval.cli` runs it: the value is unused
            raise SystemExit(0)
        except SystemExit as exc:
            code = _exit_code(exc)
        except BaseException:  # noqa: BLE001 - an uncaught error ends the process as Python does
            sys.excepthook(*sys.exc_info())
            code = 1
        # the interpreter's exit sequence: join non-daemon threads, atexit, flush (an uncaught
        # KeyboardInterrupt exits 1 here, not by SIGINT: tests that interrupt use fresh processes)
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
    finally:
        os._exit(code)


def main() -> None:
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # nothing the server itself prints can break the protocol
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            answers.close()
            _child(request)
        answers.write(json.dumps({"pid": pid}) + "\n")
        _, status, usage = os.wait4(pid, 0)
        answers.write(json.dumps({"code": os.waitstatus_to_exitcode(status),
                                  "cpu": usage.ru_utime + usage.ru_stime}) + "\n")


if __name__ == "__main__":
    main()
