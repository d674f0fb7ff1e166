"""Compaction through Spark equals local compaction (``Table.compact``)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import OptionError
from lakestore.spark import compact, read_dataframe
from tests._support import assert_same_rows

pytestmark = pytest.mark.spark

SCHEMA = pa.schema(
    [
        pa.field("dt", pa.string(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        pa.field("v", pa.string()),
    ]
)
# write-only: writers never compact, so every write adds one sorted run per bucket
OPTIONS = {"bucket": "2", "write-only": "true", "num-sorted-run.compaction-trigger": "3"}


def batch(version: int, n: int = 300) -> pa.Table:
    ids = list(range(version * 100, version * 100 + n))
    return pa.table({"dt": [f"d{i % 2}" for i in ids], "id": ids, "v": [f"v{version}-{i}" for i in ids]}, schema=SCHEMA)


def twin_tables(catalog, writes: int):
    tables = []
    for name in ("db.spark", "db.local"):
        t = catalog.create_table(name, schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=OPTIONS)
        for version in range(writes):
            t.write_arrow(batch(version))
        tables.append(t)
    return tables


def layout(table) -> dict:
    """(partition, bucket) -> sorted (level, rows, min seq, max seq) of its live files."""
    return {
        (s.partition_values, s.bucket): sorted((f.level, f.row_count, f.min_sequence_number, f.max_sequence_number) for f in s.files)
        for s in table.scan().plan()
    }


@pytest.mark.parametrize("full", [True, False], ids=["full", "picker"])
def test_spark_compaction_equals_local(spark, catalog, full):
    via_spark, local = twin_tables(catalog, writes=4)
    before = layout(via_spark)
    assert all(len(files) == 4 for files in before.values())
    expected_rows = local.to_arrow()

    got = compact(spark, via_spark, full=full)
    want = local.compact(full=full)
    assert len(got) == len(want) == 1
    assert got[0].commit_kind == want[0].commit_kind == "COMPACT"
    assert layout(via_spark) == layout(local) != before
    assert_same_rows(via_spark.to_arrow(), expected_rows, ["dt", "id"])
    assert_same_rows(read_dataframe(spark, via_spark).toArrow(), expected_rows, ["dt", "id"])
    if full:
        assert all(len(files) == 1 for files in layout(via_spark).values())


def test_compact_one_partition(spark, catalog):
    via_spark, local = twin_tables(catalog, writes=3)
    got = compact(spark, via_spark, full=True, partitions=[{"dt": "d1"}])
    local.compact(full=True, partitions=[{"dt": "d1"}])
    assert len(got) == 1
    after = layout(via_spark)
    assert after == layout(local)
    assert all(len(f) == 1 for (values, _), f in after.items() if values == ("d1",))
    assert all(len(f) == 3 for (values, _), f in after.items() if values == ("d0",))
    with pytest.raises(lakestore.PartitionValueError):
        compact(spark, via_spark, partitions=[{"nope": 1}])


def test_compact_empty_or_compacted_table_commits_nothing(spark, catalog):
    table = catalog.create_table("db.empty", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=OPTIONS)
    assert compact(spark, table) == []
    table.write_arrow(batch(0))
    compact(spark, table, full=True)
    latest = table.latest_snapshot().id
    assert compact(spark, table, full=True) == []
    assert table.latest_snapshot().id == latest


@pytest.mark.parametrize("parallelism", [1, 2, 64])
def test_tasks_share_the_buckets(spark, catalog, parallelism):
    """One task compacting every bucket, a few sharing them, or more tasks asked than buckets:
    the same files as the local compaction."""
    via_spark, local = twin_tables(catalog, writes=3)
    assert len(layout(via_spark)) > 2
    got = compact(spark, via_spark, full=True, parallelism=parallelism)
    local.compact(full=True)
    assert len(got) == 1
    assert layout(via_spark) == layout(local)
    assert all(len(files) == 1 for files in layout(via_spark).values())


@pytest.mark.parametrize("parallelism", [0, -1, 1.5])
def test_bad_parallelism_is_refused_before_anything_is_written(spark, catalog, parallelism):
    via_spark, _ = twin_tables(catalog, writes=2)
    before = via_spark.latest_snapshot()
    with pytest.raises(OptionError, match="parallelism"):
        compact(spark, via_spark, full=True, parallelism=parallelism)
    assert via_spark.latest_snapshot() == before
