"""The data source on a real cluster: ``local-cluster[2,1,1024]`` runs two executors as separate
JVM processes (each with its own Python workers), so tasks see only what travels to them."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lakestore.spark import compact, create_spark_session, distribute
from tests._support import assert_same_rows
from tests.spark.test_write_read import pk_table, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MASTER = "local-cluster[2,1,1024]"


@pytest.fixture(scope="module")
def cluster():
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    session = create_spark_session(MASTER, app_name="lakestore-cluster-tests", conf={"spark.driver.memory": "1g"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_write_read_compact_stream_on_two_executors(cluster, catalog, tmp_path):
    wh = catalog.warehouse
    table = pk_table(catalog)
    executors = cluster.range(0, 8, 1, 8).rdd.mapPartitions(lambda _: [__import__("os").getppid()]).distinct().count()
    assert executors == 2  # two executor JVMs, not threads of the driver
    for i in range(3):
        df = cluster.createDataFrame(rows(400, start=i * 200, tag=f"v{i}")).repartition(4)
        distribute(df, table).write.format("paimon").mode("append").option("warehouse", wh).save("db.t")
    expected = table.to_arrow()
    assert expected.num_rows == 800
    got = cluster.read.format("paimon").option("warehouse", wh).load("db.t")
    assert_same_rows(pa.Table.from_pylist([r.asDict() for r in got.collect()], schema=expected.schema), expected, ["dt", "id"])
    assert got.where(F.col("id") < 10).count() == 10
    snapshots = compact(cluster, table, full=True)
    assert [s.commit_kind for s in snapshots] == ["COMPACT"]
    assert all(len(split.files) == 1 for split in table.scan().plan())
    assert_same_rows(table.to_arrow(), expected, ["dt", "id"])
    # a stream of the table's changes into an append table, on the executors as well
    sink = catalog.create_table("db.sink", schema=pa.schema([*expected.schema, pa.field("_row_kind", pa.string(), nullable=False)]))
    stream = cluster.readStream.format("paimon").option("warehouse", wh).option("read.changelog", "true").load("db.t")
    query = (
        stream.writeStream.format("paimon")
        .option("warehouse", wh)
        .option("commit-user", "cluster-stream")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start("db.sink")
    )
    query.processAllAvailable()
    query.stop()
    out = sink.to_arrow()
    assert out.num_rows == 800 and pc.all(pc.equal(out["_row_kind"], "+I")).as_py()
