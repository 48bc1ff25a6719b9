"""The S3 store as a user meets it: stdout carries skilleval's report only (no botocore INFO
lines: "Found credentials in environment variables." was printed twice per run), and a rerun
reads every trial back from the bucket and pays nothing."""
from __future__ import annotations

import json

import moto  # noqa: F401 - a missing test dependency must fail, not skip

EXP = ["+experiment=trigger_eval", "trigger.runs=1", "trigger.policy=fixed", "progress=false"]


def test_s3_run_prints_no_client_log_lines_and_a_rerun_pays_nothing(skilleval_cli, s3_bucket,
                                                                   s3_server):
    root = f"s3://{s3_bucket}/st"
    first = skilleval_cli.run(*EXP, f"store.root={root}", env=s3_server, check=0)
    assert "[INFO]" not in first.stdout and "[INFO]" not in first.stderr, first.stdout[:500]
    assert "Found credentials" not in first.stdout + first.stderr
    skilleval_cli.run(*EXP, f"store.root={root}", env=s3_server, check=0)
    runs = json.loads(skilleval_cli.run("sql", "select calls_made, calls_cached from runs order by ts",
                                        "--format", "json", "--store", root, env=s3_server,
                                        check=0).stdout)
    assert len(runs) == 2 and runs[0]["calls_made"] == 20 and runs[0]["calls_cached"] == 0
    assert runs[1] == {"calls_made": 0, "calls_cached": 20}
