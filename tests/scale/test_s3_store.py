"""The store on object storage: experiments write parts to S3 (a real moto server) and
`skilleval sql` reads them back; bad URLs and endpoints are exit 2 with one line."""
from __future__ import annotations

import json
import subprocess
import sys
import uuid

import boto3
import moto  # noqa: F401 - a missing test dependency must fail, not skip


EXP = ["+experiment=trigger_eval", "trigger.runs=1", "trigger.policy=fixed", "progress=false"]


def _rows(cli, root: str, env: dict[str, str], sql: str) -> list[dict]:
    proc = cli.run("sql", sql, "--format", "json", "--store", root, env=env, check=0)
    return json.loads(proc.stdout)


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
    # every trial of both runs, once each: as many rows as distinct keys, from both runs
    counts = ("select count(*) n, count(distinct key) k, count(distinct run_id) r, "
              "(select count(distinct run_id) from runs where status = 'done') done from trials")
    got = _rows(skilleval_cli, root, s3_server, counts)[0]
    assert got["n"] == got["k"] >= 20 and got["r"] == 2 and got["done"] == 2, got
    # compaction works on the object store too: one part per view, every row once
    skilleval_cli.run("store", "compact", "--store", root, env=s3_server, check=0)
    stats = json.loads(skilleval_cli.run("store", "stats", "--store", root, "--format", "json",
                                         env=s3_server, check=0).stdout)
    assert {s["view"]: s["parts"] for s in stats}["trials"] == 1
    assert _rows(skilleval_cli, root, s3_server, counts)[0] == got
    # parts really are objects in the bucket, and no local folder named "s3:" appeared
    keys = [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert any(k.startswith("team/results/trials/") and k.endswith(".parquet") for k in keys)
    assert not (skilleval_cli.cwd / "s3:").exists()
    assert not any(p.name == "s3:" for p in skilleval_cli.cwd.rglob("s3:"))


def test_credentials_are_never_stored(skilleval_cli, s3_bucket, s3_server):
    root = f"s3://{s3_bucket}/r"
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    skilleval_cli.run(*EXP, f"store.root={root}", env={**s3_server, "AWS_SECRET_ACCESS_KEY": secret},
                      check=0)
    s3 = boto3.client("s3")
    objects = s3.list_objects_v2(Bucket=s3_bucket)["Contents"]
    stored = b"".join(s3.get_object(Bucket=s3_bucket, Key=o["Key"])["Body"].read() for o in objects)
    written = b"".join(p.read_bytes() for p in skilleval_cli.cwd.rglob("*") if p.is_file())
    for blob in (stored, written):
        assert secret.encode() not in blob and s3_server["AWS_ENDPOINT_URL"].encode() not in blob


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
        assert "Could not connect to the endpoint URL" in lines[0], lines
        assert "Traceback" not in proc.stderr
    assert not (skilleval_cli.cwd / "s3:").exists()


def test_missing_bucket_is_exit_2(skilleval_cli, s3_server):
    proc = skilleval_cli.run("sql", "select 1", "--store", "s3://no-such-bucket-here/p", env=s3_server)
    assert proc.returncode == 2 and "does not exist" in proc.stderr, proc.stderr


def test_a_damaged_part_in_s3_is_one_line_naming_the_store(skilleval_cli, s3_bucket, s3_server):
    """A local store moves a damaged part aside; on S3 the same part made every run a
    40-frame traceback (exit 1, the gate code), `sql` blame the user's SQL, and `store
    compact` a pyarrow traceback."""
    root = f"s3://{s3_bucket}/team"
    skilleval_cli.run(*EXP, f"store.root={root}", env=s3_server, check=0)
    c = boto3.client("s3")
    key = next(o["Key"] for o in c.list_objects_v2(Bucket=s3_bucket)["Contents"] if "/trials/" in o["Key"])
    c.put_object(Bucket=s3_bucket, Key=key.rsplit("/", 1)[0] + "/part-99999-deadbeef.parquet",
                 Body=b"PAR1garbagegarbagePAR1")
    for args in (("sql", "select count(*) from trials", "--store", root),
                 (*EXP, f"store.root={root}", "trigger.runs=2"),
                 ("store", "compact", "--store", root)):
        r = skilleval_cli.run(*args, env=s3_server, check=None)
        lines = [ln for ln in r.stderr.strip().splitlines() if ln.startswith("skilleval: error:")]
        assert r.returncode == 3 and "Traceback" not in r.stderr, (args, r.returncode, r.stderr[-2000:])
        assert len(lines) == 1 and root in lines[0] and "cannot be read" in lines[0], (args, r.stderr[-2000:])
