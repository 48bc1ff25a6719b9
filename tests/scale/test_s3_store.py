"""The store on object storage: experiments write parts to S3 (a real moto server) and
`skilleval sql` reads them back; bad URLs and endpoints are exit 2 with one line."""
from __future__ import annotations

import json
import subprocess
import sys

import boto3
import moto  # noqa: F401 - a missing test dependency must fail, not skip

from skilleval.store.catalog import Store

EXP = ["+experiment=trigger_eval", "trigger.runs=1", "trigger.policy=fixed", "progress=false"]


def _count(cli, root: str, env: dict[str, str], sql: str) -> int:
    proc = cli.run("sql", sql, "--format", "json", "--store", root, env=env, check=0)
    return int(next(iter(json.loads(proc.stdout)[0].values())))


def test_two_jobs_write_to_s3_at_once_and_sql_counts_their_trials(skilleval_cli, s3_bucket,
                                                                  s3_server):
    root = f"s3://{s3_bucket}/team/results"
    env = {**skilleval_cli.env, **s3_server}
    args = [sys.executable, "-m", "skilleval.cli", *EXP, f"store.root={root}"]
    # two different skills, so that neither job can reuse the other's trials from the cache
    procs = [subprocess.Popen([*args, f"skill=${{example:{name}}}"], cwd=skilleval_cli.cwd,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("changelog-writer", "csv-tidy")]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    trials = _count(skilleval_cli, root, s3_server, "select count(*) from trials")
    runs = _count(skilleval_cli, root, s3_server,
                  "select count(distinct run_id) from runs where status = 'done'")
    assert runs == 2
    # every trial of both runs, once each: as many rows as distinct keys, from both runs
    keys = _count(skilleval_cli, root, s3_server, "select count(distinct key) from trials")
    writers = _count(skilleval_cli, root, s3_server, "select count(distinct run_id) from trials")
    assert trials == keys and trials >= 20 and writers == 2
    for path in skilleval_cli.results():
        summary = json.loads(path.read_text())
        assert summary.get("calls_made", trials) <= trials
    # parts really are objects in the bucket, and no local folder named "s3:" appeared
    keys = [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert any(k.startswith("team/results/trials/") and k.endswith(".parquet") for k in keys)
    assert not (skilleval_cli.cwd / "s3:").exists()
    assert not any(p.name == "s3:" for p in skilleval_cli.cwd.rglob("s3:"))


def test_credentials_are_never_stored(skilleval_cli, s3_bucket, s3_server):
    root = f"s3://{s3_bucket}/r"
    skilleval_cli.run(*EXP, f"store.root={root}", env=s3_server, check=0)
    store = Store(root)
    blob = json.dumps(store.query("select * from runs").to_pylist(), default=str)
    assert s3_server["AWS_SECRET_ACCESS_KEY"] not in blob.replace('"testing"', "")  # no secret key
    assert "AWS_SECRET_ACCESS_KEY" not in blob and s3_server["AWS_ENDPOINT_URL"] not in blob


def test_unsupported_scheme_is_exit_2_with_one_line(skilleval_cli):
    proc = skilleval_cli.run(*EXP, "store.root=nosuchscheme://bucket/prefix")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unsupported URL scheme 'nosuchscheme'" in lines[0]
    assert not (skilleval_cli.cwd / "nosuchscheme:").exists()


def test_misconfigured_endpoint_is_exit_2_with_one_line(skilleval_cli):
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "x",
           "AWS_SECRET_ACCESS_KEY": "y", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_MAX_ATTEMPTS": "1", "AWS_RETRY_MODE": "standard"}
    for args in ([*EXP, "store.root=s3://bucket-x/p"], ["sql", "select 1", "--store", "s3://bucket-x/p"]):
        proc = skilleval_cli.run(*args, env=env)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot use the object store at http://127.0.0.1:9" in lines[0], lines
        assert "Traceback" not in proc.stderr
    assert not (skilleval_cli.cwd / "s3:").exists()


def test_missing_bucket_is_exit_2(skilleval_cli, s3_server):
    proc = skilleval_cli.run("sql", "select 1", "--store", "s3://no-such-bucket-here/p", env=s3_server)
    assert proc.returncode == 2 and "does not exist" in proc.stderr, proc.stderr
