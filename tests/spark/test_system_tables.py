"""Paimon's system tables through ``format("paimon")``: ``load("db.t$files")`` reads what
``Table.inspect`` reads; writes to a system table are refused by name."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lakestore.errors import UnsupportedTableError
from lakestore.spark import register

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])


def test_system_tables_through_the_data_source(spark, catalog):
    register(spark)
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    table.write_arrow(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": [1.0, 2.0, 3.0]}, schema=SCHEMA))
    table.write_arrow(pa.table({"dt": ["a"], "id": [1], "v": [5.0]}, schema=SCHEMA))
    table.manage.create_branch("dev")

    def load(name: str, **options: str):
        return spark.read.format("paimon").option("warehouse", catalog.warehouse).options(**options).load(name)

    snapshots = load("db.t$snapshots")
    assert snapshots.columns == table.inspect.schema("snapshots").names
    got = [(r.snapshot_id, r.commit_kind, r.commit_time) for r in snapshots.orderBy("snapshot_id").collect()]
    expected = table.inspect.snapshots().select(["snapshot_id", "commit_kind", "commit_time"]).to_pylist()
    assert got == [tuple(r.values()) for r in expected]
    files = load("db.t$files", **{"snapshot-id": "1"})
    assert sorted(r.file_path for r in files.collect()) == sorted(table.inspect.files(snapshot_id=1).column("file_path").to_pylist())
    audit = {(r.rowkind, r.id, r.v) for r in load("db.t$audit_log").collect()}
    assert audit == {("+I", 1, 5.0), ("+I", 2, 2.0), ("+I", 3, 3.0)}
    assert [r.branch_name for r in load("db.t$branch_dev$branches").collect()] == ["dev"]
    frame = spark.createDataFrame([("x",)], "file_path string")
    with pytest.raises(Exception, match=r"UnsupportedTableError|system tables are read-only") as caught:
        frame.write.format("paimon").mode("append").option("warehouse", catalog.warehouse).save("db.t$files")
    assert caught.type is UnsupportedTableError or "read-only" in str(caught.value)
    assert table.store.snapshot_manager.latest_id() == 2
