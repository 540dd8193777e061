"""A dataset in object storage: `sync --to s3://...` and the `--dataset` answers against a local
S3-compatible server (moto's server mode, on 127.0.0.1, in this process), through pyarrow's S3
file system -- the same code path as AWS or MinIO, only the endpoint differs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

moto_server = pytest.importorskip("moto.server", reason="moto[server] is in the test extra: pip install -e '.[test]'")
boto3 = pytest.importorskip("boto3")

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "home"


@pytest.fixture(scope="module")
def s3():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_EC2_METADATA_DISABLED": "true"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"]).create_bucket(Bucket="team")
    try:
        yield env
    finally:
        server.stop()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _cli(*args, check: int = 0):
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True)
    assert p.returncode == check, (p.returncode, p.stderr[-2000:])
    return [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]


def test_sync_to_s3_and_answer_from_it(s3):
    url = "s3://team/sessions"
    a = _cli("sync", "--to", url, "--home", str(HOME), "--machine", "laptop", "--format", "json")[-1]
    assert a["new"] == a["sessions"] > 40 and a["files"] > 10 and a["runs"] == 1
    keys = [o["Key"] for o in boto3.client("s3", endpoint_url=s3["AWS_ENDPOINT_URL"]).list_objects_v2(
        Bucket="team", Prefix="sessions/")["Contents"]]
    assert "sessions/_manifests/laptop.json" in keys
    assert all(k.startswith(("sessions/_manifests/", "sessions/records/machine=laptop/", "sessions/usage/machine=laptop/",
                             "sessions/sessions/machine=laptop/", "sessions/tool_calls/machine=laptop/",
                             "sessions/file_changes/machine=laptop/")) for k in keys), keys
    again = _cli("sync", "--to", url, "--home", str(HOME), "--format", "json")[-1]
    assert (again["unchanged"], again["runs"], again["files"]) == (a["sessions"], 0, 0)
    # the same numbers as the local answer, read from object storage
    got = _cli("usage", "daily", "--dataset", url, "--timezone", "UTC", "--format", "json")
    want = _cli("usage", "daily", "--home", str(HOME), "--timezone", "UTC", "--format", "json")
    assert [r for r in got if r["kind"] == "period"] == [r for r in want if r["kind"] == "period"]
    assert got[-1]["total_tokens"] == want[-1]["total_tokens"] > 0 and got[-1]["cost_usd"] == want[-1]["cost_usd"]
    rows = _cli("query", "SELECT count(*) AS n FROM records", "--dataset", url, "--format", "json")
    local = _cli("stats", "--home", str(HOME), "--shared", "--format", "json")[-1]["shared"]
    assert rows[1]["n"] == local["records"] + local["copies"]
