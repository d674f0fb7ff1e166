"""Spark writes of dynamic-bucket tables: each partition's keys are assigned by one task, so a
key never lands in two buckets, and the result equals the single-process writer's."""

from __future__ import annotations

from collections import defaultdict

import pyarrow as pa
import pytest

import lakestore
from lakestore.spark import distribute, register, write_dataframe

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
OPTIONS = {"dynamic-bucket.target-row-num": "50"}


def rows(ids: range, tag: str, dts: tuple[str, ...] = ("a", "b", "c")) -> pa.Table:
    return pa.table({"dt": [dts[i % len(dts)] for i in ids], "id": list(ids), "v": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


def buckets_of_keys(table: lakestore.Table) -> dict[tuple[str, int], set[int]]:
    where: dict[tuple[str, int], set[int]] = defaultdict(set)
    for split in table.scan().plan():
        for f in split.files:
            keys = table.store.split_reader().read_file(split.partition_values, split.bucket, f, ["dt", "id"], system=False)
            for dt, key in zip(keys["dt"].to_pylist(), keys["id"].to_pylist(), strict=True):
                where[(dt, key)].add(split.bucket)
    return where


def test_spark_writes_of_dynamic_bucket_tables_keep_keys_unique(spark, catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    reference = catalog.create_table("db.ref", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    for batch in (rows(range(0, 400), "x"), rows(range(200, 700), "y")):
        # many input partitions: without the per-partition assignment, tasks would disagree on buckets
        write_dataframe(spark.createDataFrame(batch.to_pandas()).repartition(8), table)
        reference.write_arrow(batch)
    got = table.to_arrow().sort_by([("dt", "ascending"), ("id", "ascending")])
    assert got.equals(reference.to_arrow().sort_by([("dt", "ascending"), ("id", "ascending")]))
    assert got.num_rows == 700
    where = buckets_of_keys(table)
    assert all(len(b) == 1 for b in where.values())
    assert max(b for bs in where.values() for b in bs) >= 1  # the target spread each partition over buckets
    for f in table.store.index_files():
        assert f.rows <= 50


def test_undistributed_spark_writes_of_dynamic_bucket_tables_are_refused(spark, catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    register(spark)
    df = spark.createDataFrame(rows(range(0, 100), "x").to_pandas()).repartition(4)
    with pytest.raises(Exception, match="two Spark tasks wrote bucket"):
        df.write.format("paimon").mode("append").option("warehouse", catalog.warehouse).save("db.t")
    assert table.latest_snapshot() is None
    distribute(df, table).write.format("paimon").mode("append").option("warehouse", catalog.warehouse).save("db.t")
    assert table.to_arrow().num_rows == 100
