"""The hostile tests' shared assertion, in a module of its own: a test that imports it from
``conftest`` gets whichever conftest was imported first when other test folders are collected
in the same run (tests/optimize has one too), and fails to collect."""
from __future__ import annotations


def one_line_error(proc, code: int) -> str:  # noqa: ANN001
    """Assert `proc` exited `code` with exactly one stderr line and no traceback; return it."""
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{proc.stderr}"
    return lines[0]
