"""Structured Streaming through ``format("paimon")``: change reading with snapshot-id offsets and
exactly-once micro-batch commits, also across a driver killed mid-stream."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lakestore
from lakestore.spark import register
from tests.spark.test_write_read import SCHEMA, pk_table, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SINK_SCHEMA = pa.schema([*SCHEMA, pa.field("_row_kind", pa.string(), nullable=False)])


def run_to_memory(spark, wh: str, name: str, query_name: str, **options: str) -> list[dict]:
    stream = spark.readStream.format("paimon").option("warehouse", wh).option("read.changelog", "true").options(**options).load(name)
    query = stream.writeStream.format("memory").queryName(query_name).start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    return [r.asDict() for r in spark.sql(f"select * from {query_name}").collect()]


def test_stream_read_start_modes_and_consumer(spark, catalog):
    register(spark)
    wh = catalog.warehouse
    table = pk_table(catalog, options={"changelog-producer": "input"})
    table.write_arrow(rows(20))  # snapshot 1
    table.write_arrow(rows(5, tag="v2"))  # snapshot 2: updates of ids 0..4
    full = run_to_memory(spark, wh, "db.t", "full_start")
    assert len(full) == 20 and {r["_row_kind"] for r in full} == {"+I"}
    assert {r["name"] for r in full if r["id"] < 5} == {f"v2-{i}" for i in range(5)}
    changes = run_to_memory(spark, wh, "db.t", "from_2", **{"snapshot-id": "2"})
    assert sorted(r["_row_kind"] for r in changes) == ["+I"] * 5  # input changelog: the rows as written
    assert run_to_memory(spark, wh, "db.t", "latest", start="latest") == []
    # a consumer records its position as Spark commits the source's offsets and resumes there
    opts = {"consumer-id": "c1", "snapshot-id": "1", "max-snapshots-per-trigger": "1"}
    first = run_to_memory(spark, wh, "db.t", "consumer_1", **opts)
    assert len(first) == 25 and table.manage.consumers() == {"c1": 2}  # batch 1 (snapshot 2) not yet confirmed
    table.write_arrow(rows(3, start=100))
    again = run_to_memory(spark, wh, "db.t", "consumer_2", **{"consumer-id": "c1"})
    assert sorted(r["id"] for r in again) == [0, 1, 2, 3, 4, 100, 101, 102]


def test_stream_read_needs_changelog_option(spark, catalog):
    register(spark)
    pk_table(catalog).write_arrow(rows(5))
    with pytest.raises(Exception, match="read.changelog"):
        spark.readStream.format("paimon").option("warehouse", catalog.warehouse).load("db.t").writeStream.format("memory").queryName(
            "no_kind"
        ).start().processAllAvailable()


def _child(wh: str, checkpoint: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "tests.spark.stream_child", wh, str(checkpoint), *extra]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False, start_new_session=True)


def test_killed_driver_restarts_exactly_once(catalog, tmp_path):
    wh = catalog.warehouse
    src = catalog.create_table("db.src", schema=SCHEMA, partition_keys=["dt"])
    sink = catalog.create_table("db.sink", schema=SINK_SCHEMA, partition_keys=["dt"])
    batches = 4
    for i in range(batches):
        src.write_arrow(rows(50, start=i * 50))
    checkpoint = tmp_path / "checkpoint"
    killed = _child(wh, checkpoint, "2")  # dies after batch 2's commit landed, before Spark logged it
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert [s.commit_identifier for s in sink.snapshots() if s.commit_kind == "APPEND"] == [0, 1, 2]
    done = _child(wh, checkpoint)
    assert done.returncode == 0, done.stderr[-3000:]
    # batch 2 was replayed by the restarted query and not committed again (empty batches,
    # from the source's compactions, commit nothing)
    appends = [s.commit_identifier for s in sink.snapshots() if s.commit_kind == "APPEND"]
    assert appends[:3] == [0, 1, 2] and appends == sorted(set(appends))
    out = sink.to_arrow()
    assert out.num_rows == batches * 50
    assert sorted(out.column("id").to_pylist()) == list(range(batches * 50))
    assert pc.all(pc.equal(out["_row_kind"], "+I")).as_py()
    assert lakestore.Catalog(wh).get_table("db.sink").to_arrow().num_rows == batches * 50
