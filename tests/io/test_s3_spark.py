"""A Spark round trip with the warehouse on the S3 server: executors get the table's FileIO
(endpoint, credentials, publish mode) from the driver."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore

pyspark = pytest.importorskip("pyspark")
from lakestore.spark import create_spark_session, read_dataframe, write_dataframe  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.float64())])


@pytest.fixture(scope="module")
def spark():
    active = pyspark.sql.SparkSession.getActiveSession()
    if active is not None:
        active.stop()  # a session left by another module may not be configured for this test
    session = create_spark_session(master="local[2]", app_name="lakestore-s3-test", conf={"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


def test_spark_round_trip_on_s3(spark, s3_server, bucket):
    catalog = lakestore.Catalog(f"s3://{bucket}/wh", options=s3_server.options(**{"s3.conditional-create": "true"}))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    first = pa.table({"dt": ["a"] * 50 + ["b"] * 50, "id": list(range(100)), "v": [float(i) for i in range(100)]}, schema=SCHEMA)
    write_dataframe(spark.createDataFrame(first.to_pandas()), table)
    update = pa.table({"dt": ["a", "b"], "id": [0, 99], "v": [-1.0, -2.0]}, schema=SCHEMA)
    write_dataframe(spark.createDataFrame(update.to_pandas()), table)
    expected = {(r["dt"], r["id"]): r["v"] for r in first.to_pylist()} | {("a", 0): -1.0, ("b", 99): -2.0}
    assert {(r["dt"], r["id"]): r["v"] for r in table.to_arrow().to_pylist()} == expected
    via_spark = read_dataframe(spark, table).collect()
    assert {(r["dt"], r["id"]): r["v"] for r in via_spark} == expected
    assert [s.commit_kind for s in table.snapshots()][:2] == ["APPEND", "APPEND"]
