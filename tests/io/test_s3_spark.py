"""A Spark round trip with the warehouse on the S3 server and the commit lock in PostgreSQL:
``format("paimon")`` options carry the catalog's S3 and lock settings to the executors (the
user's own options, credentials included: their choice); the helpers pass the table's reference
without credentials, which Spark's processes read from their environment
(``spark.executorEnv.AWS_*``, as on a cluster), and refuse a credential that environment lacks."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from tests.io.conftest import ACCESS_KEY, SECRET_KEY

pyspark = pytest.importorskip("pyspark")
from lakestore.spark import create_spark_session, distribute, read_dataframe, write_dataframe  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.float64())])


EXECUTOR_ENV = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}


@pytest.fixture(scope="module")
def spark():
    active = pyspark.sql.SparkSession.getActiveSession()
    if active is not None:
        active.stop()  # a session left by another module may not be configured for this test
    # the executors' credentials, as a cluster gives them: their environment, never DataFrame options
    conf = {"spark.sql.shuffle.partitions": "4", **{f"spark.executorEnv.{k}": v for k, v in EXECUTOR_ENV.items()}}
    session = create_spark_session(master="local[2]", app_name="lakestore-s3-test", conf=conf)
    yield session
    session.stop()


def test_spark_round_trip_on_s3_with_lock(spark, s3_server, bucket, postgres):
    options = s3_server.options(**postgres.lock_options())
    warehouse = f"s3://{bucket}/wh"
    catalog = lakestore.Catalog(warehouse, options=options)
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    first = pa.table({"dt": ["a"] * 50 + ["b"] * 50, "id": list(range(100)), "v": [float(i) for i in range(100)]}, schema=SCHEMA)
    # the data source, as Spark users call it: the warehouse and catalog options are options
    df = distribute(spark.createDataFrame(first.to_pandas()), table)
    df.write.format("paimon").mode("append").option("warehouse", warehouse).options(**options).save("db.t")
    update = pa.table({"dt": ["a", "b"], "id": [0, 99], "v": [-1.0, -2.0]}, schema=SCHEMA)
    write_dataframe(spark.createDataFrame(update.to_pandas()), table)  # the helper: the table's reference travels, keys stay behind
    expected = {(r["dt"], r["id"]): r["v"] for r in first.to_pylist()} | {("a", 0): -1.0, ("b", 99): -2.0}
    assert {(r["dt"], r["id"]): r["v"] for r in table.to_arrow().to_pylist()} == expected
    loaded = spark.read.format("paimon").option("warehouse", warehouse).options(**options).load("db.t")
    assert {(r["dt"], r["id"]): r["v"] for r in loaded.collect()} == expected
    assert {(r["dt"], r["id"]): r["v"] for r in read_dataframe(spark, table).collect()} == expected
    assert [s.commit_kind for s in table.snapshots()][:2] == ["APPEND", "APPEND"]


def test_the_helpers_refuse_credentials_the_executors_environment_lacks(spark, s3_server, bucket):
    other = {**s3_server.options(), "s3.secret-key": "not-the-executors-key"}
    catalog = lakestore.Catalog(f"s3://{bucket}/wh", options={**other, "s3.conditional-create": "true"})
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, options={"bucket": "-1"})
    with pytest.raises(lakestore.OptionError, match="s3.secret-key: AWS_SECRET_ACCESS_KEY") as refused:
        write_dataframe(spark.createDataFrame(pa.table({"dt": ["a"], "id": [1], "v": [1.0]}, schema=SCHEMA).to_pandas()), table)
    assert "not-the-executors-key" not in str(refused.value) and table.latest_snapshot() is None
