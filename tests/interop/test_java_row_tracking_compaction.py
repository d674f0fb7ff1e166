"""Compaction of row-tracking append tables against Paimon 2.0.0 Java's core append compaction: the
new file keeps each row's ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` as columns of its own (``_WRITE_COLS``
= the table's columns + those two, ``_FIRST_ROW_ID`` null, FileSource COMPACT, the rows' sequence
range, statistics over all four kinds of columns). Twin tables compacted by each engine give the
same file metadata; either engine reads, writes and compacts after the other, and every row keeps
its id. Data-evolution tables (Paimon's DataEvolutionCompactCoordinator) stay refused."""

from __future__ import annotations

import glob

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakestore
from lakestore.errors import UnsupportedTableError
from lakestore.meta.file_scan import live_entries

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("a", pa.string()), ("b", pa.int32())])
TRACKING = {"row-tracking.enabled": "true", "bucket": "-1"}
COLUMNS = ["dt", "id", "a", "b", "_ROW_ID", "_SEQUENCE_NUMBER"]
WRITES = [(["b", "a", "b", "c"], [1, 2, 3, 4]), (["a", "c", "a", "b"], [5, 6, 7, 8]), (["a"], [9])]


def _rows(dts: list[str], ids: list[int]) -> pa.Table:
    return pa.table({"dt": dts, "id": ids, "a": [f"a{i}" for i in ids], "b": [i * 10 for i in ids]}, schema=SCHEMA)


def _by_row_id(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: r["_ROW_ID"])


def _java(java, warehouse, identifier: str = "db.t") -> list[dict]:
    return _by_row_id(java.read(warehouse, f"{identifier}$row_tracking"))


def _lake(catalog: lakestore.Catalog, identifier: str = "db.t") -> list[dict]:
    return _by_row_id(catalog.get_table(identifier).to_arrow(columns=COLUMNS))


def _compacted(t: lakestore.Table) -> dict[bytes, tuple]:
    """Per partition, the metadata of its compaction output (one file)."""
    out = {}
    for e in live_entries(t.store.manifests(), t.latest_snapshot()):
        f = e.file
        if f.file_source == 1:
            assert e.partition not in out
            out[e.partition] = (
                f.row_count,
                f.min_sequence_number,
                f.max_sequence_number,
                f.level,
                f.first_row_id,
                f.write_cols,
                f.value_stats_cols,
                f.value_stats,
                f.delete_row_count,
            )
    return out


def test_compactions_by_either_engine_keep_every_row_id(java, catalog, warehouse):
    java.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], options=TRACKING)
    java.create_table(warehouse, "db.twin", SCHEMA, partition_keys=["dt"], options=TRACKING)
    for dts, ids in WRITES:
        for name in ("db.t", "db.twin"):
            java.write(warehouse, name, _rows(dts, ids))
    before = _java(java, warehouse)
    assert _lake(catalog) == before and [r["_ROW_ID"] for r in before] == list(range(9))

    [snapshot] = catalog.get_table("db.t").compact(full=True)
    assert snapshot.commit_kind == "COMPACT"
    java.compact(warehouse, "db.twin")
    ours, theirs = _compacted(catalog.get_table("db.t")), _compacted(catalog.get_table("db.twin"))
    assert set(ours) == set(theirs) and ours  # partitions a and b had several files
    for partition, meta in ours.items():
        assert meta == theirs[partition]  # rows may differ in order, not in metadata
        assert meta[4] is None and meta[5] == ("dt", "id", "a", "b", "_ROW_ID", "_SEQUENCE_NUMBER")
    path = next(p for p in glob.glob(f"{warehouse}/db.db/t/dt=a/bucket-0/*.parquet") if "_ROW_ID" in pq.read_schema(p).names)
    ids = {f.name: f.metadata[b"PARQUET:field_id"] for f in pq.read_schema(path) if f.name.startswith("_")}
    assert ids == {"_ROW_ID": b"2147483642", "_SEQUENCE_NUMBER": b"2147483646"}
    assert _java(java, warehouse) == _lake(catalog) == before == _java(java, warehouse, "db.twin")

    # both engines continue the compacted table; each compacts files the other wrote
    java.write(warehouse, "db.t", _rows(["a", "b"], [10, 11]))
    catalog.get_table("db.t").write_arrow(_rows(["a"], [12]))
    java.compact(warehouse, "db.t")
    catalog.get_table("db.t").write_arrow(_rows(["a", "c"], [13, 14]))
    catalog.get_table("db.t").compact(full=True)
    after = _java(java, warehouse)
    assert [r["_ROW_ID"] for r in after] == list(range(14))
    assert after[:9] == before and _lake(catalog) == after
    assert {r["id"]: r["_SEQUENCE_NUMBER"] for r in after if r["id"] >= 10} == {10: 5, 11: 5, 12: 6, 13: 8, 14: 8}


def test_data_evolution_tables_are_not_compacted(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, options={**TRACKING, "data-evolution.enabled": "true"})
    t.write_arrow(_rows(["a"], [1]))
    t.write_arrow(_rows(["a"], [2]))
    with pytest.raises(UnsupportedTableError, match="data-evolution.enabled"):
        t.compact(full=True)
