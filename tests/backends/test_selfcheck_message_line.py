"""A failed harness self-check is one readable stderr line: its message was built with
newlines that the one-line error printer then showed as literal "\\n" sequences."""
from __future__ import annotations


def test_self_check_failure_is_one_readable_line(skilleval_cli, sim) -> None:  # noqa: ANN001
    sim.configure(server_error_rate=1.0)
    r = skilleval_cli.run("+experiment=trigger_eval", "backend=anthropic_api", f"backend.base_url={sim.url}",
                          "backend.model=sim-1", "backend.max_retries=0", "trigger.runs=1")
    assert r.returncode == 3, r.stderr
    [line] = [ln for ln in r.stderr.splitlines() if ln.startswith("skilleval:")]
    assert "self-check failed" in line and "\\n" not in line, line
    assert "every control trial failed" in line and "trigger.self_check=false" in line
