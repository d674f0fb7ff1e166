"""The ``paimon`` data source over Spark Connect: a Spark Connect server started from the installed
pyspark (its own JVM, its own Python workers) and a remote client session that writes (fixed and
dynamic buckets) and reads (filters applied exactly, a DataFrame reused across queries)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyspark
import pytest

import lakestore
from lakestore.spark import spark_settings

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory) -> Iterator[str]:
    port = _free_port()
    conf = {**spark_settings("local[2]"), "spark.connect.grpc.binding.port": str(port), "spark.connect.grpc.binding.address": "127.0.0.1"}
    command = [str(Path(pyspark.__file__).parent / "bin" / "spark-submit"), "--master", "local[2]"]
    command += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    log = tmp_path_factory.mktemp("connect") / "server.log"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    with open(log, "w") as out:
        server = subprocess.Popen([*command, "spark-internal"], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240
        while True:
            if server.poll() is not None:
                pytest.fail(f"Spark Connect server exited: {log.read_text()[-3000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"Spark Connect server did not listen within 240 s: {log.read_text()[-3000:]}")
                time.sleep(1)
        yield f"sc://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()


def test_write_and_read_over_spark_connect(connect_url, tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "2"})
    dynamic = catalog.create_table("db.d", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"])
    child = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "connect_child.py"), connect_url, catalog.warehouse],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert result == {"filtered": ["new", "v2", "v4", "v6", "v8"], "count": 200}
    assert table.to_arrow().num_rows == 200
    assert sorted(dynamic.to_arrow()["id"].to_pylist()) == list(range(200))
