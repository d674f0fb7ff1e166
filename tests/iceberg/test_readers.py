"""lakestore's Iceberg-compatible metadata read by pyiceberg, DuckDB (iceberg_scan) and Polars
(scan_iceberg), row for row against ``Table.to_arrow()`` at the same snapshot: append and
primary-key tables, partitioned and not, after schema evolution, deletes and compaction; the
metadata's layout, options and expiration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import lakestore
from lakestore.errors import OptionError, UnsupportedTableError
from lakestore.iceberg import write_iceberg_metadata
from tests.iceberg.readers import all_readers, duckdb_connection, latest_metadata, metadata_json, sorted_rows

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64()), ("name", pa.string())])


@pytest.fixture(scope="module")
def con() -> Any:
    return duckdb_connection()


def _batch(dt: str, ids: range, v: float) -> pa.Table:
    n = len(ids)
    return pa.table({"dt": [dt] * n, "id": list(ids), "v": [v] * n, "name": [f"n{i}" for i in ids]}, schema=SCHEMA)


def _agree(con: Any, table: lakestore.Table, metadata: str, snapshot_id: int | None = None) -> int:
    """Every Iceberg reader returns lakestore's rows at that snapshot; returns the row count."""
    expected = table.to_arrow(snapshot_id=snapshot_id) if snapshot_id is not None else table.to_arrow()
    columns = expected.schema.names
    want = sorted_rows(expected, columns)
    for reader, got in all_readers(con, metadata, snapshot_id).items():
        assert got.schema.names == columns, reader
        assert sorted_rows(got, columns) == want, reader
    return len(want)


@pytest.mark.parametrize("partitioned", [True, False])
def test_append_table_every_snapshot(tmp_path: Path, con: Any, partitioned: bool):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t", schema=SCHEMA, partition_keys=["dt"] if partitioned else [], options={"metadata.iceberg.storage": "table-location"}
    )
    table.write_arrow(_batch("2024-01-01", range(0, 5), 1.0))
    table.write_arrow(_batch("2024-01-02", range(5, 9), 2.0))
    table.write_arrow(_batch("2024-01-01", range(9, 12), 3.0))
    metadata_dir = tmp_path / "db.db" / "t" / "metadata"
    assert (metadata_dir / "version-hint.text").read_text() == "3"
    metadata = latest_metadata(metadata_dir)
    assert [_agree(con, table, metadata, sid) for sid in (1, 2, 3)] == [5, 9, 12]
    doc = metadata_json(metadata)
    assert [s["snapshot-id"] for s in doc["snapshots"]] == [1, 2, 3]
    assert doc["partition-specs"][0]["fields"] == (
        [{"name": "dt", "transform": "identity", "source-id": 0, "field-id": 1000}] if partitioned else []
    )
    # incremental: snapshot 3's manifest list reuses the manifests of snapshots 1 and 2
    assert doc["snapshots"][-1]["summary"]["total-records"] == "12"
    assert not (metadata_dir / "v2.metadata.json").exists()  # previous-versions-max = 0


def test_primary_key_table_publishes_compacted_files(tmp_path: Path, con: Any):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table(
        "db.pk",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "2", "metadata.iceberg.storage": "table-location"},
    )
    table.write_arrow(_batch("2024-01-01", range(0, 6), 1.0))
    table.compact(full=True)
    metadata_dir = tmp_path / "db.db" / "pk" / "metadata"
    assert _agree(con, table, latest_metadata(metadata_dir)) == 6
    table.write_arrow(_batch("2024-01-01", range(3, 9), 2.0))  # upserts 3..5, level 0 only
    doc = metadata_json(latest_metadata(metadata_dir))
    assert doc["snapshots"][-1]["summary"]["added-data-files"] == "0"  # level-0 files are not published
    table.delete(lakestore.col("id") == 0)
    table.write_arrow(_batch("2024-01-02", range(0, 3), 3.0))
    snapshots = table.compact(full=True)
    assert snapshots
    metadata = latest_metadata(metadata_dir)
    assert metadata_json(metadata)["snapshots"][-1]["summary"]["operation"] in ("replace", "overwrite")
    assert _agree(con, table, metadata) == 11
    assert _agree(con, table, metadata, snapshots[-1].id) == 11


def test_schema_evolution(tmp_path: Path, con: Any):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options={"metadata.iceberg.storage": "table-location"})
    table.write_arrow(_batch("2024-01-01", range(0, 4), 1.0))
    table = catalog.alter_table("db.t", [lakestore.AddColumn("extra", pa.int32()), lakestore.RenameColumn("name", "label")])
    evolved = pa.table(
        {"dt": ["2024-01-02"] * 2, "id": [10, 11], "v": [5.0, 6.0], "label": ["x", "y"], "extra": pa.array([7, None], pa.int32())},
        schema=table.arrow_schema,
    )
    table.write_arrow(evolved)
    metadata = latest_metadata(tmp_path / "db.db" / "t" / "metadata")
    doc = metadata_json(metadata)
    assert [s["schema-id"] for s in doc["schemas"]] == [0, 1]
    assert doc["current-schema-id"] == 1
    assert _agree(con, table, metadata) == 6


def test_hadoop_catalog_location_and_expiration(tmp_path: Path, con: Any):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        options={
            "metadata.iceberg.storage": "hadoop-catalog",
            "metadata.iceberg.previous-versions-max": "1",
            "snapshot.num-retained.min": "2",
            "snapshot.num-retained.max": "2",
        },
    )
    for i in range(5):
        table.write_arrow(_batch("2024-01-01", range(i * 3, i * 3 + 3), float(i)))
    metadata_dir = tmp_path / "iceberg" / "db" / "t" / "metadata"
    assert not (tmp_path / "db.db" / "t" / "metadata").exists()
    latest = table.latest_snapshot()
    assert latest is not None and latest.id >= 5  # the fifth write also compacted (a COMPACT snapshot)
    n = latest.id
    assert sorted(p.name for p in metadata_dir.glob("v*.metadata.json")) == [f"v{n - 1}.metadata.json", f"v{n}.metadata.json"]
    metadata = latest_metadata(metadata_dir)
    doc = metadata_json(metadata)
    assert [s["snapshot-id"] for s in doc["snapshots"]] == [n - 1, n]  # snapshot.num-retained.max = 2
    referenced = {Path(s["manifest-list"]).name for s in doc["snapshots"]}
    referenced |= {Path(s["manifest-list"]).name for s in metadata_json(str(metadata_dir / f"v{n - 1}.metadata.json"))["snapshots"]}
    assert {p.name for p in metadata_dir.glob("snap-*.avro")} <= referenced  # expired manifest lists are deleted
    assert _agree(con, table, metadata) == 15
    assert _agree(con, table, metadata, n - 1) == table.to_arrow(snapshot_id=n - 1).num_rows


def test_manifests_are_compacted(tmp_path: Path, con: Any):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        options={
            "metadata.iceberg.storage": "table-location",
            "metadata.iceberg.compaction.min.file-num": "3",
            "metadata.iceberg.compaction.max.file-num": "3",  # else small manifests wait until they reach the target size
        },
    )
    for i in range(4):
        table.write_arrow(_batch("2024-01-01", range(i, i + 1), float(i)))
    metadata = latest_metadata(tmp_path / "db.db" / "t" / "metadata")
    iceberg_table = StaticTable.from_metadata(metadata)
    snapshot = iceberg_table.current_snapshot()
    assert snapshot is not None
    assert len(snapshot.manifests(iceberg_table.io)) < 4
    assert _agree(con, table, metadata) == 4


def test_unsupported_iceberg_options_are_refused(tmp_path: Path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    for options in (
        {"metadata.iceberg.storage": "hive-catalog"},
        {"metadata.iceberg.storage": "table-location", "metadata.iceberg.format-version": "3"},
    ):
        with pytest.raises((OptionError, UnsupportedTableError)):
            catalog.create_table("db.bad", schema=SCHEMA, options=options)


def test_tables_iceberg_cannot_describe_are_refused_before_writing(tmp_path: Path):
    """Paimon publishes TIMESTAMP columns of precision 3 to 9 only: a TIMESTAMP(0) column makes
    writes refuse by name before anything is committed (Paimon Java fails after its commit)."""
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    schema = pa.schema([("ts", pa.timestamp("s")), ("id", pa.int64())])
    table = catalog.create_table("db.t", schema=schema, options={"metadata.iceberg.storage": "table-location"})
    with pytest.raises(UnsupportedTableError, match="metadata.iceberg.storage"):
        table.write_arrow(pa.table({"ts": pa.array([0], pa.timestamp("s")), "id": [1]}, schema=schema))
    assert table.latest_snapshot() is None
    assert not (tmp_path / "db.db" / "t" / "metadata").exists()


def test_tags_become_iceberg_refs(tmp_path: Path, con: Any):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, options={"metadata.iceberg.storage": "table-location"})
    table.write_arrow(_batch("2024-01-01", range(0, 3), 1.0))
    table.write_arrow(_batch("2024-01-01", range(3, 5), 2.0))
    table.manage.create_tag("first", snapshot_id=1)
    metadata_dir = tmp_path / "db.db" / "t" / "metadata"
    metadata = latest_metadata(metadata_dir)
    assert metadata_json(metadata)["refs"] == {"first": {"snapshot-id": 1, "type": "tag", "max-ref-age-ms": 2**63 - 1}}
    iceberg_table = StaticTable.from_metadata(metadata)
    assert iceberg_table.scan(snapshot_id=iceberg_table.snapshot_by_name("first").snapshot_id).to_arrow().num_rows == 3  # type: ignore[union-attr]
    table.write_arrow(_batch("2024-01-01", range(5, 6), 3.0))  # the next version keeps the ref
    assert set(metadata_json(latest_metadata(metadata_dir))["refs"]) == {"first"}
    table.manage.delete_tag("first")
    assert metadata_json(latest_metadata(metadata_dir))["refs"] == {}
    assert _agree(con, table, latest_metadata(metadata_dir)) == 6


@pytest.mark.parametrize("kept_versions", [0, 10])
def test_rollback_moves_the_iceberg_metadata_back(tmp_path: Path, con: Any, kept_versions: int):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    options = {"metadata.iceberg.storage": "table-location", "metadata.iceberg.previous-versions-max": str(kept_versions)}
    table = catalog.create_table("db.t", schema=SCHEMA, options=options)
    for i in range(4):
        table.write_arrow(_batch("2024-01-01", range(i * 2, i * 2 + 2), float(i)))
    metadata_dir = tmp_path / "db.db" / "t" / "metadata"
    table.manage.rollback_to(2)
    assert (metadata_dir / "version-hint.text").read_text() == "2"
    # v2 kept, or rebuilt (previous-versions-max = 0 had deleted it); v3 and v4 are gone
    assert sorted(p.name for p in metadata_dir.glob("v*.metadata.json")) == (
        ["v2.metadata.json"] if not kept_versions else ["v1.metadata.json", "v2.metadata.json"]
    )
    assert _agree(con, table, latest_metadata(metadata_dir)) == 4
    table.write_arrow(_batch("2024-01-02", range(100, 103), 9.0))  # snapshot 3 again, with other rows
    metadata = latest_metadata(metadata_dir)
    assert metadata.endswith("v3.metadata.json")
    assert _agree(con, table, metadata) == 7
    referenced = {Path(s["manifest-list"]).name for s in metadata_json(metadata)["snapshots"]}
    assert {p.name for p in metadata_dir.glob("snap-*.avro")} == referenced  # the rolled-back lists are gone


def test_metadata_of_an_older_snapshot_never_replaces_a_newer_one(tmp_path: Path):
    """Concurrent committers may finish their post-commit steps out of order: the metadata of a
    later snapshot is never superseded (version-hint.text stays on it)."""
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, options={"metadata.iceberg.storage": "table-location"})
    table.write_arrow(_batch("2024-01-01", range(0, 2), 1.0))
    table.write_arrow(_batch("2024-01-01", range(2, 4), 2.0))
    metadata_dir = tmp_path / "db.db" / "t" / "metadata"
    assert not (metadata_dir / "v1.metadata.json").exists()
    sources = table._iceberg_sources()
    assert sources is not None
    assert write_iceberg_metadata(sources, table.snapshot(1)) is None
    assert (metadata_dir / "version-hint.text").read_text() == "2"
    assert sorted(p.name for p in metadata_dir.glob("v*.metadata.json")) == ["v2.metadata.json"]


def test_a_table_created_again_starts_new_hadoop_catalog_metadata(tmp_path: Path, con: Any):
    """hadoop-catalog metadata lives outside the table directory, so dropping the table leaves it:
    the new table's first commit replaces it (as Paimon does), later commits continue."""
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    options = {"metadata.iceberg.storage": "hadoop-catalog"}
    table = catalog.create_table("db.t", schema=SCHEMA, options=options)
    for i in range(3):
        table.write_arrow(_batch("2024-01-01", range(i * 2, i * 2 + 2), float(i)))
    catalog.drop_table("db.t")
    metadata_dir = tmp_path / "iceberg" / "db" / "t" / "metadata"
    assert (metadata_dir / "v3.metadata.json").exists()
    table = catalog.create_table("db.t", schema=SCHEMA, options=options)
    table.write_arrow(_batch("2024-01-05", range(50, 51), 9.0))
    assert sorted(p.name for p in metadata_dir.glob("v*.metadata.json")) == ["v1.metadata.json"]
    assert _agree(con, table, latest_metadata(metadata_dir)) == 1
    table.write_arrow(_batch("2024-01-05", range(51, 53), 9.0))
    assert _agree(con, table, latest_metadata(metadata_dir)) == 3


def test_explicit_expiration_leaves_the_iceberg_metadata(tmp_path: Path, con: Any):
    """table.maintenance.expire_snapshots deletes the files of expired snapshots: the latest Iceberg metadata
    drops those snapshots (and their manifest lists), keeping tagged ones."""
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, options={"metadata.iceberg.storage": "table-location"})
    table.write_arrow(_batch("2024-01-01", range(0, 2), 1.0))
    table.write_arrow(_batch("2024-01-01", range(2, 4), 2.0))
    table.manage.create_tag("keep", snapshot_id=2)
    table.write_arrow(_batch("2024-01-01", range(4, 6), 3.0))
    table.write_arrow(_batch("2024-01-01", range(6, 8), 4.0))
    metadata_dir = tmp_path / "db.db" / "t" / "metadata"
    assert [s["snapshot-id"] for s in metadata_json(latest_metadata(metadata_dir))["snapshots"]] == [1, 2, 3, 4]
    result = table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1)
    assert result.expired_snapshot_ids == (1, 2, 3)
    metadata = latest_metadata(metadata_dir)
    doc = metadata_json(metadata)
    assert [s["snapshot-id"] for s in doc["snapshots"]] == [2, 4]  # 2 is tagged
    listed = {Path(s["manifest-list"]).name for s in doc["snapshots"]}
    assert {p.name for p in metadata_dir.glob("snap-*.avro")} == listed
    assert _agree(con, table, metadata) == 8
    iceberg_table = StaticTable.from_metadata(metadata)
    assert iceberg_table.scan(snapshot_id=2).to_arrow().num_rows == 4  # the tag's files are kept
