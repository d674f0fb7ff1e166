"""Every system table lakestore implements, against Paimon 2.0.0 Java reading the same system
table (``db.t$files``, ...) of the same tables: the same columns (names, order, types,
nullability) and the same values.

One warehouse for the module (one JVM): a partitioned primary-key table written by lakestore and
by Java (an update, a deletion, a Java compaction), tagged, branched and with a consumer; a
dynamic-bucket table (key-hash index files); a deletion-vector table compacted by Java (vectors);
an append table; the ``dev`` branch of the first table."""

from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import UnsupportedTableError
from lakestore.meta.schema_change import AddColumn
from tests.oracle.java_driver import JavaOracle, java_oracle

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema(
    [pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64()), ("s", pa.string())]
)
APPEND = pa.schema([("id", pa.int32()), ("name", pa.string()), ("price", pa.float64()), ("day", pa.date32())])
TABLES = ["db.pk", "db.dyn", "db.dv", "db.ap", "db.rt", "db.multi", "db.pk$branch_dev"]
MULTI = pa.schema(
    [
        ("p", pa.int32()),
        ("d", pa.date32()),
        ("ts", pa.timestamp("ms")),
        ("amount", pa.decimal128(10, 2)),
        ("flag", pa.bool_()),
        ("f", pa.float32()),
    ]
)
NAMES = [
    "snapshots",
    "schemas",
    "options",
    "tags",
    "branches",
    "consumers",
    "statistics",
    "files",
    "manifests",
    "partitions",
    "buckets",
    "table_indexes",
    "audit_log",
    "binlog",
    "file_key_ranges",
    "aggregation_fields",
    "ro",
]


def rows(dt: str, ids: list[int], v: float) -> pa.Table:
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [v + i for i in ids], "s": [f"s{i}" for i in ids]}, schema=SCHEMA)


@pytest.fixture(scope="module")
def java() -> JavaOracle:
    return java_oracle()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory, java) -> Path:
    wh = tmp_path_factory.mktemp("system") / "wh"
    catalog = lakestore.Catalog(str(wh))
    catalog.create_database("db")
    pk = catalog.create_table(
        "db.pk", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2", "changelog-producer": "input"}
    )
    pk.write_arrow(rows("2024-01-01", [1, 2, 3], 1.0))
    pk.write_arrow(rows("2024-01-02", [4, 5], 2.5))
    java.write(wh, "db.pk", rows("2024-01-01", [2, 6], 10.0))
    pk = catalog.get_table("db.pk")
    pk.delete(lakestore.col("id") == 3)
    pk.manage.create_tag("t1", time_retained="36 h")
    pk.manage.create_tag("t2", snapshot_id=2)
    pk.manage.create_branch("dev", tag="t1").write_arrow(rows("2024-01-03", [7], 0.5))
    java.compact(wh, "db.pk")
    catalog.get_table("db.pk").write_arrow(rows("2024-01-02", [5], -1.0))
    catalog.get_table("db.pk").manage.reset_consumer("reader", 3)

    dyn = catalog.create_table(
        "db.dyn",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "-1", "merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "fields.s.aggregate-function": "max"},
    )
    dyn.write_arrow(rows("2024-01-01", [1, 2, 3], 1.0))
    dyn.write_arrow(rows("2024-01-02", [4], 1.0))
    dyn.write_arrow(rows("2024-01-01", [1, 3], 10.0))
    java.analyze(wh, "db.dyn", merged_record_count=4, merged_record_size=321, columns={"id": [4, 1, 4, 0]})  # $statistics

    java.create_table(
        wh, "db.dv", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "1", "deletion-vectors.enabled": "true"}
    )
    java.write(wh, "db.dv", rows("2024-01-01", [1, 2, 3], 1.0))
    java.compact(wh, "db.dv")
    java.write(wh, "db.dv", rows("2024-01-01", [2], 5.0))  # its lookup compaction marks the old row 2 deleted

    ap = catalog.create_table("db.ap", schema=APPEND, options={"bucket": "-1"})
    ap.write_arrow(
        pa.table(
            {
                "id": [3, 1, None],
                "name": ["c", "a", None],
                "price": [1.5, 1e-5, 2e7],
                "day": pa.array([19000, 19001, None], pa.int32()).cast(pa.date32()),
            },
            schema=APPEND,
        )
    )
    ap.write_arrow(pa.table({"id": [2], "name": ["b"], "price": [0.1], "day": pa.array([0], pa.int32()).cast(pa.date32())}, schema=APPEND))
    # schema evolution: older files lack the new column (its statistics: all null)
    catalog.alter_table("db.ap", [AddColumn("extra", pa.int64())])
    evolved = APPEND.append(pa.field("extra", pa.int64()))
    day = pa.array([5], pa.int32()).cast(pa.date32())
    catalog.get_table("db.ap").write_arrow(
        pa.table({"id": pa.array([9], pa.int32()), "name": ["z"], "price": [9.5], "day": day, "extra": [7]}, schema=evolved)
    )
    # partitions of several types, a null one (the default partition name); statistics of more types
    multi = catalog.create_table("db.multi", schema=MULTI, partition_keys=["p", "d"])
    multi.write_arrow(
        pa.table(
            {
                "p": pa.array([1, None, 1], pa.int32()),
                "d": pa.array([19000, 19001, 19000], pa.int32()).cast(pa.date32()),
                "ts": pa.array([1_700_000_000_123, 1_700_000_001_000, None], pa.int64()).cast(pa.timestamp("ms")),
                "amount": pa.array([decimal.Decimal("1.50"), decimal.Decimal("-2.25"), None], pa.decimal128(10, 2)),
                "flag": [True, False, None],
                "f": pa.array([0.1, 2.5, None], pa.float32()),
            },
            schema=MULTI,
        )
    )
    rt = catalog.create_table("db.rt", schema=APPEND, options={"row-tracking.enabled": "true"})
    rt.write_arrow(
        pa.table({"id": pa.array([1, 2], pa.int32()), "name": ["a", "b"], "price": [1.0, 2.0], "day": [None, None]}, schema=APPEND)
    )
    rt.write_arrow(pa.table({"id": pa.array([3], pa.int32()), "name": ["c"], "price": [3.0], "day": [None]}, schema=APPEND))
    return wh


def _comparable(name: str, table: pa.Table) -> list[dict[str, Any]]:
    """Rows in a deterministic order; JSON maps parsed (Java prints a HashMap's order)."""
    out = table.to_pylist()
    for row in out:
        if name == "schemas":
            row["options"] = json.loads(row["options"])
            row["fields"] = json.loads(row["fields"])
        if "file_path" in row:
            row["file_path"] = row["file_path"].removeprefix("file:")
    return sorted(out, key=repr)


@pytest.mark.parametrize("identifier", TABLES)
@pytest.mark.parametrize("name", NAMES)
def test_system_table_equals_java(java, warehouse, identifier, name):
    catalog = lakestore.Catalog(str(warehouse))
    ours = catalog.get_system_table(f"{identifier}${name}").to_arrow()
    theirs = java.read(warehouse, f"{identifier}${name}")
    assert ours.schema == theirs.schema
    assert _comparable(name, ours) == _comparable(name, theirs)


@pytest.mark.parametrize("name", ["files", "manifests", "partitions", "table_indexes", "audit_log", "binlog"])
def test_time_travel_equals_java(java, warehouse, name):
    table = lakestore.Catalog(str(warehouse)).get_table("db.pk")
    at = table.snapshot(2).time_millis
    for travel, options in (
        ({"snapshot_id": 2}, {"scan.snapshot-id": "2"}),
        ({"tag": "t1"}, {"scan.tag-name": "t1"}),
        ({"timestamp_ms": at}, {"scan.timestamp-millis": str(at)}),
    ):
        ours = table.inspect.table(name, **travel)
        theirs = java.read(warehouse, f"db.pk${name}", options=options)
        assert _comparable(name, ours) == _comparable(name, theirs)


def test_row_tracking_equals_java(java, warehouse):
    catalog = lakestore.Catalog(str(warehouse))
    ours = catalog.get_system_table("db.rt$row_tracking").to_arrow()
    theirs = java.read(warehouse, "db.rt$row_tracking")
    assert ours.schema == theirs.schema
    assert _comparable("row_tracking", ours) == _comparable("row_tracking", theirs)
    assert sorted(ours.column("_ROW_ID").to_pylist()) == [0, 1, 2]
    with pytest.raises(UnsupportedTableError, match="row-tracking"):
        catalog.get_system_table("db.pk$row_tracking").to_arrow()
    with pytest.raises(Exception, match="(?i)row.tracking"):
        java.read(warehouse, "db.pk$row_tracking")
