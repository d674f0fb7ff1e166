"""The Spark write and compaction paths run the table's post-commit maintenance, as local ones do."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.spark import compact, write_dataframe

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])


def test_spark_write_and_compact_expire_snapshots(spark, catalog):
    table = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "1", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"},
    )
    for i in range(3):
        write_dataframe(spark.createDataFrame([("a", i, float(i))], "dt string, id long, v double"), table)
    assert table.store.snapshot_manager.list_ids() == [2, 3]
    assert len(compact(spark, table, full=True)) == 1
    assert table.store.snapshot_manager.list_ids() == [3, 4]
    assert sorted(table.to_arrow().column("id").to_pylist()) == [0, 1, 2]
    with pytest.raises(lakestore.PartitionValueError, match="not partition keys"):
        compact(spark, table, partitions=[{"bogus": "a"}])
