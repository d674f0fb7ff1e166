"""Paimon <-> Spark type mapping, and an exact round trip of every type through Spark."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from lakestore.format.types import parse_type
from lakestore.spark import read_dataframe, spark_schema, spark_type, write_dataframe
from lakestore.spark.types import spark_arrow_schema, to_spark_arrow
from tests._support import assert_same_rows

pytestmark = pytest.mark.spark


@pytest.mark.parametrize(
    ("paimon", "spark"),
    [
        ("BOOLEAN", T.BooleanType()),
        ("TINYINT", T.ByteType()),
        ("SMALLINT", T.ShortType()),
        ("INT", T.IntegerType()),
        ("BIGINT", T.LongType()),
        ("FLOAT", T.FloatType()),
        ("DOUBLE", T.DoubleType()),
        ("DECIMAL(5, 0)", T.DecimalType(5, 0)),
        ("DECIMAL(38, 18)", T.DecimalType(38, 18)),
        ("STRING", T.StringType()),
        ("VARCHAR(10)", T.StringType()),
        ("CHAR(3)", T.StringType()),
        ("BYTES", T.BinaryType()),
        ("BINARY(16)", T.BinaryType()),
        ("DATE", T.DateType()),
        ("TIMESTAMP(3)", T.TimestampNTZType()),
        ("TIMESTAMP(6)", T.TimestampNTZType()),
        ("TIMESTAMP(9)", T.TimestampNTZType()),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", T.TimestampType()),
        ("TIMESTAMP(6) WITH LOCAL TIME ZONE", T.TimestampType()),
        ("TIME(3)", T.TimeType(3)),
    ],
)
def test_type_mapping(paimon, spark):
    assert spark_type(parse_type(paimon)) == spark


SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("b", pa.bool_()),
        pa.field("i8", pa.int8()),
        pa.field("i16", pa.int16()),
        pa.field("i32", pa.int32()),
        pa.field("f32", pa.float32()),
        pa.field("f64", pa.float64()),
        pa.field("d_small", pa.decimal128(9, 3)),
        pa.field("d_big", pa.decimal128(38, 10)),
        pa.field("s", pa.string()),
        pa.field("bin", pa.binary()),
        pa.field("day", pa.date32()),
        pa.field("ts_ms", pa.timestamp("ms")),
        pa.field("ts_us", pa.timestamp("us")),
        pa.field("ltz_us", pa.timestamp("us", tz="UTC")),
    ]
)


def sample() -> pa.Table:
    n = 5
    return pa.table(
        {
            "id": list(range(n)),
            "b": [True, False, None, True, False],
            "i8": [-128, 127, None, 0, 1],
            "i16": [-32768, 32767, None, 0, 2],
            "i32": [-(2**31), 2**31 - 1, None, 0, 3],
            "f32": [1.5, -0.0, None, float("inf"), 3.25],
            "f64": [1e300, -1e-300, None, float("-inf"), 0.1],
            "d_small": [decimal.Decimal("123456.789"), decimal.Decimal("-0.001"), None, decimal.Decimal(0), decimal.Decimal("1.5")],
            "d_big": [
                decimal.Decimal("1234567890123456789012345678.0123456789"),
                decimal.Decimal("-0.0000000001"),
                None,
                decimal.Decimal(0),
                decimal.Decimal("7"),
            ],
            "s": ["ascii", "ünïcödé ✓", None, "", "x" * 1000],
            "bin": [b"\x00\xff", b"", None, bytes(range(256)), b"z"],
            "day": [dt.date(1, 1, 1), dt.date(9999, 12, 31), None, dt.date(1970, 1, 1), dt.date(2024, 2, 29)],
            "ts_ms": [
                dt.datetime(1900, 1, 1, 0, 0, 0, 1000),
                dt.datetime(2262, 4, 11),
                None,
                dt.datetime(1970, 1, 1),
                dt.datetime(2024, 2, 29, 23, 59, 59, 999000),
            ],
            "ts_us": [
                dt.datetime(1, 1, 1, 0, 0, 0, 1),
                dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
                None,
                dt.datetime(1970, 1, 1),
                dt.datetime(2024, 2, 29, 12, 0, 0, 123456),
            ],
            "ltz_us": [
                dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC),
                dt.datetime(2038, 1, 19, 3, 14, 8, tzinfo=dt.UTC),
                None,
                dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
                dt.datetime(2024, 6, 1, 12, 30, tzinfo=dt.UTC),
            ],
        },
        schema=SCHEMA,
    )


def test_schema_of_table(catalog):
    table = catalog.create_table("db.types", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    schema = spark_schema(table.schema)
    assert schema.fieldNames() == SCHEMA.names
    assert schema["id"].nullable is False and schema["s"].nullable is True
    assert schema["ts_ms"].dataType == T.TimestampNTZType() and schema["ltz_us"].dataType == T.TimestampType()
    assert schema["d_big"].dataType == T.DecimalType(38, 10)
    assert spark_schema(table.schema, ["s", "id"]).fieldNames() == ["s", "id"]


@pytest.mark.parametrize("primary_key", [True, False], ids=["pk", "append"])
def test_types_round_trip_exactly(spark, catalog, primary_key):
    data = sample()
    opts = {"primary_keys": ["id"], "options": {"bucket": "2"}} if primary_key else {}
    written_by_spark = catalog.create_table("db.via_spark", schema=SCHEMA, **opts)
    written_locally = catalog.create_table("db.via_local", schema=SCHEMA, **opts)

    # Spark -> lakestore: the DataFrame carries the table's exact Spark types
    spark_rows = to_spark_arrow(data, spark_arrow_schema(written_by_spark.schema, SCHEMA.names))
    df = spark.createDataFrame(spark_rows, schema=spark_schema(written_by_spark.schema))
    write_dataframe(df, written_by_spark)
    assert_same_rows(written_by_spark.to_arrow(), data, ["id"])

    # lakestore -> Spark: the values Spark sees are the written ones
    written_locally.write_arrow(data)
    got = read_dataframe(spark, written_locally).toArrow()
    assert [f.name for f in got.schema] == SCHEMA.names
    assert got.schema.field("ts_ms").type == pa.timestamp("us")  # Spark's unit, same instants
    assert_same_rows(
        got.cast(pa.schema([f.with_nullable(True) for f in got.schema])),
        spark_rows.cast(pa.schema([f.with_nullable(True) for f in spark_rows.schema])),
        ["id"],
    )
    assert_same_rows(read_dataframe(spark, written_by_spark).toArrow().cast(got.schema), got, ["id"])


def test_sub_precision_timestamp_from_spark_is_refused(spark, catalog):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("ts", pa.timestamp("ms"))])
    table = catalog.create_table("db.ts", schema=schema, primary_keys=["id"], options={"bucket": "1"})
    data = pa.table({"id": [1], "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 1)], pa.timestamp("us"))})
    with pytest.raises(Exception, match="ts"):
        write_dataframe(spark.createDataFrame(data, schema=spark_schema(table.schema)), table)
    assert table.latest_snapshot() is None
