"""Buckets computed in Spark SQL (``distribute``'s JVM path) equal lakestore's bucket function."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from lakestore.format.bucket import compute_buckets
from lakestore.format.types import parse_type
from lakestore.spark import bucket_sql

pytestmark = pytest.mark.spark

N = 3000


def _cases(rng: np.random.Generator) -> list[tuple[list[str], list[pa.Array]]]:
    def mask(p: float) -> np.ndarray:
        return rng.random(N) < p

    return [
        (["BIGINT"], [pa.array(rng.integers(-(2**63), 2**63 - 1, N, dtype=np.int64))]),
        (["INT"], [pa.array(rng.integers(-(2**31), 2**31 - 1, N).astype(np.int32), mask=mask(0.1))]),
        (
            ["SMALLINT", "TINYINT"],
            [
                pa.array(rng.integers(-(2**15), 2**15 - 1, N).astype(np.int16)),
                pa.array(rng.integers(-128, 127, N).astype(np.int8), mask=mask(0.2)),
            ],
        ),
        (
            ["DATE", "BOOLEAN", "BIGINT"],
            [
                pa.array(rng.integers(-20000, 30000, N).astype(np.int32)).cast(pa.date32()),
                pa.array(rng.random(N) < 0.5, mask=mask(0.1)),
                pa.array(rng.integers(0, 10**6, N, dtype=np.int64), mask=mask(0.1)),
            ],
        ),
    ]


def test_sql_buckets_equal_the_bucket_function(spark):
    rng = np.random.default_rng(7)
    for names, arrays in _cases(rng):
        types = [parse_type(n) for n in names]
        columns = [f"c{i}" for i in range(len(names))]
        df = spark.createDataFrame(pa.table(arrays, names=columns)).withColumn("pos", F.monotonically_increasing_id())
        for buckets in (3, 1000):
            got = bucket_sql.with_bucket(df, columns, types, buckets, "b").select("pos", "b").toArrow().sort_by("pos")
            expected = compute_buckets(types, arrays, buckets)
            assert np.array_equal(got.column("b").to_numpy(), expected), (names, buckets)


def test_types_outside_the_fixed_layout_keep_the_udf():
    assert bucket_sql.supported([parse_type("BIGINT"), parse_type("DATE")])
    assert not bucket_sql.supported([parse_type("STRING")])
    assert not bucket_sql.supported([parse_type("DOUBLE")])
    assert not bucket_sql.supported([])
