"""The PySpark job of docs/dataset.md (the code block itself, run in Spark's local mode) computes the
daily usage table `usage daily --dataset` prints, on a dataset two machines synced.

Spark needs a Java runtime: `java` from the machine (Debian's default-jre-headless; the fixture
installs it with apt-get when it is missing and apt-get is there as root). Without it the test
skips naming why; under CI=true it fails. One Spark session serves every test here (starting one
takes ~15 s)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark is in the test extra: pip install -e '.[test]'")

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "home"


def _java() -> str | None:
    exe = shutil.which("java")
    if exe is None:
        return None
    p = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=60)
    return exe if p.returncode == 0 else None


def _install_java() -> str:
    apt = shutil.which("apt-get")
    if apt is None:
        return "apt-get is not available"
    if os.geteuid() != 0:
        return "not root (apt-get install needs it)"
    import fcntl

    with open("/tmp/.sessionsift-java-install.lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if _java():
            return ""
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        p = subprocess.run([apt, "install", "-y", "-qq", "default-jre-headless"], capture_output=True, text=True,
                           env=env, timeout=900)
        if p.returncode != 0:  # the package lists may be missing on a fresh machine
            subprocess.run([apt, "update", "-qq"], capture_output=True, text=True, env=env, timeout=600)
            p = subprocess.run([apt, "install", "-y", "-qq", "default-jre-headless"], capture_output=True, text=True,
                               env=env, timeout=900)
        return "" if p.returncode == 0 else f"apt-get install default-jre-headless failed: {p.stderr.strip()[-300:]}"


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    if _java() is None:
        why = _install_java()
        if _java() is None:
            why = f"no Java runtime for Spark and none could be installed: {why or 'java not found after install'}"
            if os.environ.get("CI") == "true":
                pytest.fail(why)
            pytest.skip(why)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    tmp = tmp_path_factory.mktemp("spark")
    s = (SparkSession.builder.master("local[2]").appName("sessionsift-tests")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.memory", "1g").config("spark.local.dir", str(tmp))
         .config("spark.sql.warehouse.dir", str(tmp / "warehouse")).getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _job() -> dict:
    """The docs' job, executed as a script (its functions travel to the workers by value)."""
    doc = (REPO / "docs" / "dataset.md").read_text()
    sec = doc.split("\n## Spark\n", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", sec, re.S)[0]
    ns: dict = {"__name__": "__main__"}
    exec(compile(code, "docs/dataset.md#spark", "exec"), ns)  # noqa: S102 - the documented job, run as written
    return ns


def test_the_documented_spark_job_equals_usage_daily_over_the_dataset(spark, tmp_path):
    ds = tmp_path / "ds"
    for name in ("laptop", "workstation"):  # the same sessions on two machines: each response once
        env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / f"state-{name}")}
        p = subprocess.run([sys.executable, "-m", "sessionsift", "sync", "--to", str(ds), "--home", str(HOME),
                            "--machine", name], capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
    job = _job()
    got = [r.asDict() for r in job["daily_usage"](spark, str(ds), "UTC").collect()]
    p = subprocess.run([sys.executable, "-m", "sessionsift", "usage", "daily", "--dataset", str(ds), "--timezone", "UTC",
                        "--format", "json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    want = [json.loads(x) for x in p.stdout.splitlines()]
    want = [r for r in want if r["kind"] == "period"]
    assert len(got) == len(want) >= 2
    for g, w in zip(got, want):
        assert g["day"] == w["period"]
        for k in ("messages", "records_merged", "input_tokens", "output_tokens", "cache_write_tokens",
                  "cache_write_1h_tokens", "cache_read_tokens", "reasoning_tokens"):
            assert g[k] == w[k], (g["day"], k)
        assert (None if g["cost_usd"] is None else round(g["cost_usd"], 6)) == w["cost_usd"]
        assert g["models"] == sorted(m["model"] for m in w["models"] if m["messages"])
    assert sum(g["messages"] for g in got) > 100
