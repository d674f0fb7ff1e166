"""Iceberg metadata of Paimon 2.0.0 Java and of lakestore for the same commits: Java's metadata
read by pyiceberg, lakestore continuing a Java-written table (and Java continuing lakestore's)
with every version readable, and the two engines' metadata agreeing on schemas, partition specs,
snapshots and their summaries."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

import lakestore
from tests.iceberg.readers import duckdb_connection, latest_metadata, metadata_json, read_duckdb, read_pyiceberg, sorted_rows
from tests.oracle.java_driver import java_oracle

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
CASES = {
    "append": {"primary_keys": [], "partition_keys": ["dt"], "options": {"bucket": "-1"}},
    "append-unpartitioned": {"primary_keys": [], "partition_keys": [], "options": {"bucket": "-1"}},
    "primary-key": {"primary_keys": ["dt", "id"], "partition_keys": ["dt"], "options": {"bucket": "1"}},
    "primary-key-unpartitioned": {"primary_keys": ["dt", "id"], "partition_keys": [], "options": {"bucket": "2"}},
    "deletion-vectors": {
        "primary_keys": ["dt", "id"],
        "partition_keys": ["dt"],
        "options": {"bucket": "1", "deletion-vectors.enabled": "true"},
    },
}


@pytest.fixture(scope="module")
def java() -> Any:
    return java_oracle()


def _batch(dt: str, ids: range, v: float) -> pa.Table:
    return pa.table({"dt": [dt] * len(ids), "id": list(ids), "v": [v] * len(ids)}, schema=SCHEMA)


def _iceberg_rows(metadata: str) -> list[tuple[Any, ...]]:
    return sorted_rows(read_pyiceberg(metadata), SCHEMA.names)


def _shape(doc: dict[str, Any]) -> dict[str, Any]:
    """What both engines must agree on (uuids, paths, times and file sizes differ)."""
    keep = ("operation", "added-data-files", "added-records", "deleted-data-files", "deleted-records", "total-records", "total-data-files")
    return {
        "format-version": doc["format-version"],
        "last-column-id": doc["last-column-id"],
        "schemas": doc["schemas"],
        "current-schema-id": doc["current-schema-id"],
        "partition-specs": doc["partition-specs"],
        "last-partition-id": doc["last-partition-id"],
        "snapshots": [({k: s["summary"].get(k) for k in keep}, s["snapshot-id"], s.get("parent-snapshot-id")) for s in doc["snapshots"]],
        "current-snapshot-id": doc["current-snapshot-id"],
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_java_and_lakestore_write_the_same_metadata(tmp_path: Path, java: Any, case: str):
    spec = CASES[case]
    options = {**spec["options"], "metadata.iceberg.storage": "table-location"}
    java_wh, ours_wh = tmp_path / "java", tmp_path / "ours"
    java.create_table(java_wh, "db.t", SCHEMA, primary_keys=spec["primary_keys"], partition_keys=spec["partition_keys"], options=options)
    catalog = lakestore.Catalog(str(ours_wh))
    catalog.create_database("db")
    ours = catalog.create_table(
        "db.t", schema=SCHEMA, primary_keys=spec["primary_keys"], partition_keys=spec["partition_keys"], options=options
    )
    batches = [_batch("a", range(0, 4), 1.0), _batch("b", range(0, 3), 2.0), _batch("a", range(2, 6), 3.0)]
    for batch in batches:
        java.write(java_wh, "db.t", batch)
        ours.write_arrow(batch)
    if spec["primary_keys"]:
        java.compact(java_wh, "db.t")
        ours.compact(full=True)
    java_meta = latest_metadata(java_wh / "db.db" / "t" / "metadata")
    ours_meta = latest_metadata(ours_wh / "db.db" / "t" / "metadata")
    assert _shape(metadata_json(ours_meta)) == _shape(metadata_json(java_meta))
    assert _iceberg_rows(java_meta) == sorted_rows(java.read(java_wh, "db.t"), SCHEMA.names)
    assert _iceberg_rows(ours_meta) == _iceberg_rows(java_meta)


@pytest.mark.parametrize("case", sorted(CASES))
def test_engines_continue_each_others_iceberg_metadata(tmp_path: Path, java: Any, case: str):
    spec = CASES[case]
    options = {**spec["options"], "metadata.iceberg.storage": "hadoop-catalog"}
    java.create_table(tmp_path, "db.t", SCHEMA, primary_keys=spec["primary_keys"], partition_keys=spec["partition_keys"], options=options)
    metadata_dir = tmp_path / "iceberg" / "db" / "t" / "metadata"
    java.write(tmp_path, "db.t", _batch("a", range(0, 4), 1.0))
    java.write(tmp_path, "db.t", _batch("b", range(0, 2), 2.0))
    if spec["primary_keys"]:
        java.compact(tmp_path, "db.t")
    java_version = int((metadata_dir / "version-hint.text").read_text())
    java_doc = metadata_json(latest_metadata(metadata_dir))
    # lakestore continues the Java-written table and its Iceberg metadata (same table uuid)
    table = lakestore.Catalog(str(tmp_path)).get_table("db.t")
    table.write_arrow(_batch("a", range(3, 7), 3.0))
    if spec["primary_keys"]:
        table.compact(full=True)
    metadata = latest_metadata(metadata_dir)
    doc = metadata_json(metadata)
    assert doc["table-uuid"] == java_doc["table-uuid"]
    assert [s["snapshot-id"] for s in doc["snapshots"]][:java_version] == [s["snapshot-id"] for s in java_doc["snapshots"]]
    expected = sorted_rows(table.to_arrow(), SCHEMA.names)
    assert _iceberg_rows(metadata) == expected
    assert sorted_rows(read_duckdb(duckdb_connection(), metadata), SCHEMA.names) == expected
    # Java continues lakestore's
    java.write(tmp_path, "db.t", _batch("c", range(0, 3), 4.0))
    if spec["primary_keys"]:
        java.compact(tmp_path, "db.t")
    metadata = latest_metadata(metadata_dir)
    assert metadata_json(metadata)["table-uuid"] == java_doc["table-uuid"]
    assert _iceberg_rows(metadata) == sorted_rows(java.read(tmp_path, "db.t"), SCHEMA.names)


def test_schema_evolution_and_deletes_across_engines(tmp_path: Path, java: Any):
    """A primary-key table evolved and deleted from by both engines: both write the same Iceberg
    schemas, and every engine's latest metadata reads as that engine reads the table."""
    options = {"bucket": "1", "metadata.iceberg.storage": "table-location"}
    java_wh, ours_wh = tmp_path / "java", tmp_path / "ours"
    java.create_table(java_wh, "db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=options)
    catalog = lakestore.Catalog(str(ours_wh))
    catalog.create_database("db")
    ours = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=options)
    first = _batch("a", range(0, 5), 1.0)
    java.write(java_wh, "db.t", first)
    ours.write_arrow(first)
    java.alter(java_wh, "db.t", [{"op": "add_column", "name": "extra", "type": "INT"}])
    ours = catalog.alter_table("db.t", [lakestore.AddColumn("extra", pa.int32())])
    evolved = pa.table(
        {"dt": ["a", "b"], "id": [1, 7], "v": [9.0, 8.0], "extra": pa.array([3, None], pa.int32())},
        schema=ours.arrow_schema,
    )
    java.write(java_wh, "db.t", evolved)
    ours.write_arrow(evolved)
    java.compact(java_wh, "db.t")
    ours.compact(full=True)
    java_meta = latest_metadata(java_wh / "db.db" / "t" / "metadata")
    ours_meta = latest_metadata(ours_wh / "db.db" / "t" / "metadata")
    assert _shape(metadata_json(ours_meta)) == _shape(metadata_json(java_meta))
    columns = ours.arrow_schema.names
    assert sorted_rows(read_pyiceberg(java_meta), columns) == sorted_rows(java.read(java_wh, "db.t"), columns)
    assert sorted_rows(read_pyiceberg(ours_meta), columns) == sorted_rows(ours.to_arrow(), columns)
    # lakestore deletes from the Java-written table; Java compacts; Iceberg readers follow
    table = lakestore.Catalog(str(java_wh)).get_table("db.t")
    table.delete(lakestore.col("id") == 0)
    java.compact(java_wh, "db.t")
    java_meta = latest_metadata(java_wh / "db.db" / "t" / "metadata")
    expected = sorted_rows(java.read(java_wh, "db.t"), columns)
    assert len(expected) == 5
    assert sorted_rows(read_pyiceberg(java_meta), columns) == expected
    assert sorted_rows(read_duckdb(duckdb_connection(), java_meta), columns) == expected


def _entries(metadata: str) -> dict[Any, dict[str, Any]]:
    """Live data files of the current snapshot by partition: what pruning readers use."""
    doc = metadata_json(metadata)
    current = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
    out = {}
    with open(current["manifest-list"], "rb") as fh:
        manifests = list(fastavro.reader(fh))
    for manifest in manifests:
        with open(manifest["manifest_path"], "rb") as fh:
            for entry in fastavro.reader(fh):
                f = entry["data_file"]
                key = tuple(sorted(f["partition"].items()))
                out[key] = {
                    "status": entry["status"],
                    "record_count": f["record_count"],
                    "file_format": f["file_format"],
                    "null_value_counts": sorted((m["key"], m["value"]) for m in f["null_value_counts"]),
                    "lower_bounds": sorted((m["key"], m["value"]) for m in f["lower_bounds"]),
                    "upper_bounds": sorted((m["key"], m["value"]) for m in f["upper_bounds"]),
                }
    return out


def test_column_statistics_equal_javas(tmp_path: Path, java: Any):
    """The bounds and null counts Iceberg readers prune with, per type, as Paimon 2.0.0 Java
    publishes them for the same rows (one file per partition in both engines)."""
    schema = pa.schema(
        [
            ("dt", pa.string()),
            ("i", pa.int32()),
            ("b", pa.int64()),
            ("f", pa.float32()),
            ("d", pa.float64()),
            ("s", pa.string()),
            ("flag", pa.bool_()),
            ("day", pa.date32()),
            ("ts", pa.timestamp("us")),
            ("ms", pa.timestamp("ms")),
            ("small", pa.decimal128(9, 2)),
            ("big", pa.decimal128(30, 4)),
            ("bin", pa.binary()),
        ]
    )
    data = pa.table(
        {
            "dt": ["a", "a", "b"],
            "i": [1, -5, None],
            "b": [2**40, -3, 7],
            "f": [1.5, None, -2.25],
            "d": [0.1, 2.5, None],
            "s": ["abc", "a-much-longer-string-than-sixteen", None],
            "flag": [True, False, None],
            "day": [dt.date(2024, 1, 2), dt.date(1969, 12, 31), None],
            "ts": [dt.datetime(2024, 1, 1, 12, 0, 0, 123456), None, dt.datetime(1960, 5, 6)],
            "ms": [dt.datetime(2024, 1, 1, 0, 0, 1, 500000), None, None],
            "small": [decimal.Decimal("-1.25"), decimal.Decimal("300.00"), None],
            "big": [decimal.Decimal("12345678901234567890.1234"), None, decimal.Decimal("-0.0001")],
            "bin": [b"\x00\x01", b"\xff", None],
        },
        schema=schema,
    )
    options = {"metadata.iceberg.storage": "table-location"}
    java_wh, ours_wh = tmp_path / "java", tmp_path / "ours"
    java.create_table(java_wh, "db.t", schema, partition_keys=["dt"], options=options)
    java.write(java_wh, "db.t", data)
    catalog = lakestore.Catalog(str(ours_wh))
    catalog.create_database("db")
    ours = catalog.create_table("db.t", schema=schema, partition_keys=["dt"], options=options)
    ours.write_arrow(data)
    java_entries = _entries(latest_metadata(java_wh / "db.db" / "t" / "metadata"))
    ours_entries = _entries(latest_metadata(ours_wh / "db.db" / "t" / "metadata"))
    assert len(ours_entries) == 2
    assert ours_entries == java_entries
    # and the readers prune with them: DuckDB filters on the published bounds
    con = duckdb_connection()
    metadata = latest_metadata(ours_wh / "db.db" / "t" / "metadata")
    got = con.sql(f"SELECT count(*) FROM iceberg_scan('{metadata}') WHERE big < 0 AND ts < TIMESTAMP '1970-01-01'").fetchall()
    assert got == [(1,)]
