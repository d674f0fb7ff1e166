"""PaimonIOManager with PySpark DataFrames: a partitioned Spark output written distributed
through lakestore's Spark source (re-materializing one partition replaces only it), and a
downstream Spark input with selected columns. One test, few Spark jobs: a local Spark job costs
seconds, the partition semantics are covered with Arrow outputs."""

import os
import sys

import pytest

pytest.importorskip("pyspark")

import dagster as dg  # noqa: E402
import pyarrow as pa  # noqa: E402

from tests.resources.paimon_support import output_metadata, run  # noqa: E402

pytestmark = [pytest.mark.dagster, pytest.mark.spark]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    from lakestore.spark import create_spark_session

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    session = active or create_spark_session(
        master="local[2]", app_name="lakestore-io-manager-tests", conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g"}
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    if active is None:
        session.stop()


def test_spark_dataframes_are_written_distributed_and_read_back(spark, io_manager, catalog):
    from pyspark.sql import DataFrame

    regions = dg.StaticPartitionsDefinition(["eu", "us"])
    version = {"n": 2}

    @dg.asset(
        key=["db", "clicks"],
        partitions_def=regions,
        metadata={"partition_expr": "region"},
    )
    def clicks(context: dg.AssetExecutionContext) -> DataFrame:
        n = version["n"]
        return spark.createDataFrame([(context.partition_key, i, f"u{i}") for i in range(n)], "region string, id long, user string")

    seen = {}

    @dg.asset(key=["db", "users"], ins={"clicks": dg.AssetIn(key=["db", "clicks"], metadata={"columns": ["user"]})})
    def users(clicks: DataFrame) -> None:
        seen["columns"] = clicks.columns
        seen["count"] = clicks.count()

    run([clicks], io_manager, partition_key="eu")
    us = pa.table({"region": ["us", "us"], "id": pa.array([0, 1], pa.int64()), "user": ["u0", "u1"]})
    catalog.get_table("db.clicks").write_arrow(us, overwrite={"region": "us"})  # another partition, written without Spark
    version["n"] = 3
    meta = output_metadata(run([clicks], io_manager, partition_key="eu"), "db/clicks")
    table = catalog.get_table("db.clicks")
    counts = {r["region"]: r["id_count"] for r in table.to_arrow().group_by("region").aggregate([("id", "count")]).to_pylist()}
    assert counts == {"eu": 3, "us": 2}
    assert meta["commit_kind"] == "OVERWRITE" and meta["rows_added"] == 3 and meta["rows_removed"] == 2
    assert table.arrow_schema.field("id").type == pa.int64()
    run([users, clicks], io_manager, selection=[users])
    assert seen == {"columns": ["user"], "count": 5}
