"""Nested columns through Spark: type mapping, and a DataFrame written and read back."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import types as T  # noqa: E402

import lakestore  # noqa: E402
from lakestore.format.types import from_arrow  # noqa: E402
from lakestore.spark import create_spark_session, read_dataframe, spark_type, write_dataframe  # noqa: E402
from lakestore.spark.types import spark_arrow_type  # noqa: E402

pytestmark = pytest.mark.spark

ROW = pa.struct([pa.field("a", pa.int32()), pa.field("ts", pa.timestamp("ns"))])


@pytest.fixture(scope="module")
def spark():
    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master == "local[2,2]":
        yield active  # the Spark tests' session: reused, left running
        return
    if active is not None:
        active.stop()
    session = create_spark_session(
        master="local[2,2]", app_name="lakestore-tests", conf={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "1g"}
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_spark_types_of_nested_types():
    dtype = from_arrow(pa.map_(pa.string(), pa.list_(ROW)))
    assert spark_type(dtype) == T.MapType(
        T.StringType(),
        T.ArrayType(T.StructType([T.StructField("a", T.IntegerType()), T.StructField("ts", T.TimestampNTZType())])),
        valueContainsNull=True,
    )
    # Spark reads microseconds, also inside nested values.
    assert spark_arrow_type(dtype) == pa.map_(pa.string(), pa.list_(pa.struct([("a", pa.int32()), ("ts", pa.timestamp("us"))])))


def test_a_dataframe_with_nested_columns_round_trips(spark, tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            ("tags", pa.list_(pa.string())),
            ("attrs", pa.map_(pa.string(), pa.int64())),
            ("r", ROW),
        ]
    )
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "2"})
    ts = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
    frame = spark.createDataFrame(
        [(1, ["a", None], {"x": 1, "y": None}, (1, ts)), (2, None, None, None), (3, [], {}, (None, None))],
        schema=T.StructType(
            [
                T.StructField("id", T.LongType(), nullable=False),
                T.StructField("tags", T.ArrayType(T.StringType())),
                T.StructField("attrs", T.MapType(T.StringType(), T.LongType())),
                T.StructField("r", T.StructType([T.StructField("a", T.IntegerType()), T.StructField("ts", T.TimestampNTZType())])),
            ]
        ),
    )
    write_dataframe(frame, table)
    expected = [
        {"id": 1, "tags": ["a", None], "attrs": [("x", 1), ("y", None)], "r": {"a": 1, "ts": ts}},
        {"id": 2, "tags": None, "attrs": None, "r": None},
        {"id": 3, "tags": [], "attrs": [], "r": {"a": None, "ts": None}},
    ]
    assert table.to_arrow().sort_by("id").to_pylist() == expected
    back = sorted(read_dataframe(spark, table).collect(), key=lambda r: r["id"])
    assert [r.asDict(recursive=True) for r in back] == [
        {**e, "attrs": None if e["attrs"] is None else dict(e["attrs"]), "r": e["r"]} for e in expected
    ]
