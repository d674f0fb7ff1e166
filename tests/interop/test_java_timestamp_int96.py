"""TIMESTAMP(7..9) in parquet as Paimon writes it: INT96 (Paimon 2.0's ParquetSchemaConverter),
which Paimon 2.0.0 and 1.4.2 read (1.4.2 misreads INT64 nanoseconds). pyarrow writes INT96 for all
of a file's timestamps or none, so lakestore's files with a nanosecond column hold every
timestamp as INT96, unless a coarser one lies outside the years INT96 is read back in by
lakestore (1677..2262): such files keep INT64 (lakestore/format/parquet.py ``uses_int96``)."""

from __future__ import annotations

import datetime
import glob

import pyarrow as pa
import pyarrow.parquet as pq

import lakestore
from lakestore.meta.file_scan import live_entries

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("ts9", pa.timestamp("ns")),
        ("ltz9", pa.timestamp("ns", tz="UTC")),
        ("ltz3", pa.timestamp("ms", tz="UTC")),
        ("list9", pa.list_(pa.timestamp("ns"))),
    ]
)


def _data() -> pa.Table:
    nanos = 1_704_067_200_123_456_789  # 2024-01-01 00:00:00.123456789
    return pa.table(
        {
            "id": [1, 2, 3],
            "ts3": [datetime.datetime(2024, 1, 1, 0, 0, 0, 123000), None, datetime.datetime(1900, 1, 1)],
            "ts6": [datetime.datetime(2024, 1, 1, 0, 0, 0, 123456), None, datetime.datetime(1950, 6, 1, 1, 1, 1, 1)],
            "ts9": pa.array([nanos, None, -1], pa.timestamp("ns")),
            "ltz9": pa.array([nanos, None, 5], pa.timestamp("ns", tz="UTC")),
            "ltz3": pa.array([1, None, -1000], pa.timestamp("ms", tz="UTC")),
            "list9": pa.array([[nanos, None], None, []], pa.list_(pa.timestamp("ns"))),
        },
        schema=SCHEMA,
    )


def _physical(path: str) -> dict[str, str]:
    schema = pq.ParquetFile(path).schema
    return {schema.column(i).path: schema.column(i).physical_type for i in range(len(schema))}


def _files(t: lakestore.Table) -> list[str]:
    return [f"{t.path}/bucket-{e.bucket}/{e.file.file_name}" for e in live_entries(t.store.manifests(), t.latest_snapshot())]


def test_nanosecond_files_hold_int96_both_engines_read(java_any, catalog, warehouse):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    data = _data()
    table.write_arrow(data)
    [path] = _files(table)
    physical = _physical(path)
    assert {name: kind for name, kind in physical.items() if "ts" in name or "ltz" in name or "list9" in name} == {
        "ts3": "INT96",
        "ts6": "INT96",
        "ts9": "INT96",
        "ltz9": "INT96",
        "ltz3": "INT96",
        "list9.list.element": "INT96",
    }
    assert table.to_arrow().sort_by("id").equals(data)
    assert java_any.read(warehouse, "db.t").cast(SCHEMA).sort_by("id").equals(data)
    # Java continues the table and compacts lakestore's file; lakestore compacts Java's
    java_any.write(warehouse, "db.t", data.slice(0, 1))
    java_any.compact(warehouse, "db.t")
    assert catalog.get_table("db.t").to_arrow().sort_by("id").equals(data)
    catalog.get_table("db.t").write_arrow(data.slice(2, 1))
    catalog.get_table("db.t").compact(full=True)
    for path in _files(catalog.get_table("db.t")):
        assert _physical(path)["ts9"] == "INT96"
    assert java_any.read(warehouse, "db.t").cast(SCHEMA).sort_by("id").equals(data)


def test_coarse_timestamps_beyond_nanoseconds_keep_int64(java, catalog, warehouse):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts3", pa.timestamp("ms")), ("ts9", pa.timestamp("ns"))])
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1"})
    data = pa.table({"id": [1], "ts3": [datetime.datetime(3000, 1, 1)], "ts9": pa.array([5], pa.timestamp("ns"))}, schema=schema)
    table.write_arrow(data)
    [path] = glob.glob(f"{table.path}/bucket-0/*.parquet")
    assert _physical(path)["ts3"] == "INT64" and _physical(path)["ts9"] == "INT64"
    assert table.to_arrow().equals(data)
    assert java.read(warehouse, "db.t").cast(schema).equals(data)  # Paimon 2.0 reads INT64 nanoseconds
    # within the range, the next file is INT96 again
    more = pa.table({"id": [2], "ts3": [datetime.datetime(2000, 1, 1)], "ts9": pa.array([6], pa.timestamp("ns"))}, schema=schema)
    table.write_arrow(more)
    kinds = sorted(_physical(p)["ts9"] for p in glob.glob(f"{table.path}/bucket-0/*.parquet"))
    assert kinds == ["INT64", "INT96"]
    table.compact(full=True)  # one output file: the year 3000 keeps it INT64
    [path] = _files(catalog.get_table("db.t"))
    assert _physical(path)["ts3"] == "INT64"
    expected = pa.concat_tables([data, more])
    assert catalog.get_table("db.t").to_arrow().sort_by("id").equals(expected)
    assert java.read(warehouse, "db.t").cast(schema).sort_by("id").equals(expected)
