"""The Spark writer under ``bucket-function.type`` mod and hive: rows land in the buckets
lakestore's writer (and Paimon 2.0) assigns, one task per bucket."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lakestore
from lakestore.format.bucket import compute_buckets
from lakestore.spark import write_dataframe

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("k", pa.string(), nullable=False), ("v", pa.string())])


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


@pytest.mark.parametrize(("function", "keys"), [("mod", ["id"]), ("hive", ["id", "k"])])
def test_spark_writer_follows_the_bucket_function(spark, catalog, function, keys):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=keys, options={"bucket": "4", "bucket-function.type": function})
    n = 500
    data = pa.table({"id": np.arange(-250, n - 250), "k": [f"k{i % 7}" for i in range(n)], "v": ["x"] * n}, schema=SCHEMA)
    write_dataframe(spark.createDataFrame(data.to_pandas()), table)
    types = table.schema.types_of(keys)
    reader = table.store.split_reader()
    seen = 0
    for split in table.scan().plan():
        got = reader.read(split, keys, None)
        expected = compute_buckets(types, [got.column(k).combine_chunks() for k in keys], 4, function)
        assert (expected == split.bucket).all()
        assert len(split.files) == 1  # one task wrote the bucket
        seen += got.num_rows
    assert seen == n
