"""Fixtures for the scale-out features: a real S3 server (moto's server mode) on 127.0.0.1.

moto, ray and joblib are test dependencies (the ``test`` extra): a missing one fails the
tests loudly at import, it never skips them."""
from __future__ import annotations

import logging
import uuid
from typing import Iterator

import pytest


@pytest.fixture(scope="session")
def s3_server() -> Iterator[dict[str, str]]:
    """A moto S3 server on a free loopback port; yields the AWS env vars that point at it."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    server.stop()


@pytest.fixture
def s3_bucket(s3_server: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bucket; the test process's AWS env points at the moto server."""
    import boto3

    for k, v in s3_server.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    name = f"skilleval-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_server["AWS_ENDPOINT_URL"]).create_bucket(Bucket=name)
    return name
