"""lakestore.spark.compat on the suite's pyspark (4.3): each fallback and refusal that older
pyspark versions take, forced here by switching the feature off (tests/spark/test_pyspark_versions.py
runs them on pyspark 4.0 and 4.1 themselves)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import types as T

from lakestore import errors
from lakestore.format.types import parse_type
from lakestore.spark import bucket_column, compat, register, write_dataframe
from lakestore.spark.options import BUCKET_COLUMN
from lakestore.spark.stream import PaimonStreamReader
from lakestore.spark.types import spark_type
from tests._support import assert_same_rows

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("k", pa.string(), nullable=False), pa.field("v", pa.int64())])


def _rows(n: int) -> pa.Table:
    columns = {"dt": [f"2024-01-0{1 + i % 3}" for i in range(n)], "k": [f"key-{i}" for i in range(n)], "v": list(range(n))}
    return pa.table(columns, schema=SCHEMA)


def test_release_numbers():
    assert compat._release("4.0.5") == (4, 0, 5)
    assert compat._release("4.1.0.dev1") == (4, 1, 0)
    assert compat._release("4.3") == (4, 3, 0)
    assert compat._release(compat.PYSPARK_VERSION) >= compat._release(compat.MINIMUM_PYSPARK)


def test_to_arrow_schema_gives_utc_timestamps():
    schema = T.StructType([T.StructField("a", T.TimestampType()), T.StructField("b", T.TimestampNTZType())])
    assert compat.to_arrow_schema(schema) == pa.schema([pa.field("a", pa.timestamp("us", tz="UTC")), pa.field("b", pa.timestamp("us"))])


def test_with_arrow_column_by_map_in_arrow_equals_the_udf(spark, monkeypatch):
    df = spark.createDataFrame(_rows(50))

    def length(keys: pa.Array) -> pa.Array:
        return pc.utf8_length(keys).cast(pa.int32())

    by_udf = compat.with_arrow_column(df, "n", length, ["k"], T.IntegerType())
    monkeypatch.setattr(compat, "ARROW_UDF", False)
    by_map = compat.with_arrow_column(df.withColumn("n", df.v), "n", length, ["k"], T.IntegerType())  # replaces a column "n"
    assert by_map.columns == ["dt", "k", "v", "n"]
    assert sorted(map(tuple, by_map.collect())) == sorted(map(tuple, by_udf.collect()))


def test_write_without_arrow_udfs(spark, catalog, monkeypatch):
    """pyspark 4.0's distribute: string bucket keys hashed in a mapInArrow pass, one task per bucket."""
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "3"})
    monkeypatch.setattr(compat, "ARROW_UDF", False)
    data = _rows(300)
    snapshot = write_dataframe(spark.createDataFrame(data), table)  # two tasks writing one bucket would be refused
    assert snapshot is not None and snapshot.commit_kind == "APPEND"
    assert_same_rows(table.to_arrow(), data, ["dt", "k"])
    assert BUCKET_COLUMN not in table.to_arrow().column_names
    with pytest.raises(errors.OptionError, match=f"arrow_udf.*needs pyspark >= 4.1; this is pyspark {compat.PYSPARK_VERSION}"):
        bucket_column(table)


def test_refusals_name_the_version(spark, catalog, monkeypatch):
    version = f"this is pyspark {compat.PYSPARK_VERSION}"
    for feature in ("FILTER_PUSHDOWN", "STREAM_ARROW_WRITER", "READ_LIMITS", "TIME_TYPE"):
        monkeypatch.setattr(compat, feature, False)
    with pytest.raises(errors.OptionError, match=f"filter pushdown.*needs pyspark >= 4.1; {version}"):
        register(spark, filter_pushdown=True)
    register(spark)  # without pushdown: fine
    with pytest.raises(errors.OptionError, match=f"writeStream.*needs pyspark >= 4.1; {version}: use foreachBatch"):
        compat.require_stream_writer()
    table = catalog.create_table("db.s", schema=SCHEMA, primary_keys=["dt", "k"], options={"bucket": "1"})
    options = {"path": table.path, "read.changelog": "true", "max-snapshots-per-trigger": "1"}
    with pytest.raises(errors.OptionError, match=f"max-snapshots-per-trigger.*needs pyspark >= 4.3; {version}"):
        PaimonStreamReader(options, T.StructType([T.StructField("k", T.StringType())]))
    with pytest.raises(errors.UnsupportedTypeError, match=f"TIME columns need pyspark >= 4.1.*{version}"):
        spark_type(parse_type("TIME(3)"))
