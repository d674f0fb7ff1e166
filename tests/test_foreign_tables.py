"""Tables other engines wrote: lakestore refuses what it cannot honour, carries forward what it
does not understand, keeps what branches reference, and reads time travel with the snapshot's own
schema. Each test reproduces a way lakestore once damaged or misread such a table."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakestore
from lakestore.errors import UnsupportedTableError, UnsupportedTypeError
from lakestore.format.types import DataType, parse_type
from lakestore.lifecycle.files import TableFiles
from lakestore.meta.schema_change import AddColumn, DropColumn
from lakestore.meta.snapshot import Snapshot
from tests._support import assert_same_rows
from tests.compact._tables import live_files
from tests.oracle.driver import oracle_available, oracle_read, oracle_write

# a time after every snapshot of the test session: time retention never protects them
LATER_MS = int(time.time() * 1000) + 86_400_000

needs_oracle = pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")
FAR_FUTURE_MS = int(time.time() * 1000) + 10 * 86_400_000
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _rows(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": ids, "v": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


def _snapshot_ids(table_path: str | Path) -> list[str]:
    return sorted(n for n in os.listdir(Path(table_path) / "snapshot") if n.startswith("snapshot-"))


def _set_options_as_another_engine(table: lakestore.Table, options: dict[str, str]) -> lakestore.Table:
    """Rewrite the latest schema file with extra options, as an engine that implements them would
    have created the table, then reopen it."""
    path = Path(table.path) / "schema" / f"schema-{table.schema.id}"
    doc = json.loads(path.read_text())
    doc["options"].update(options)
    path.write_text(json.dumps(doc))
    return lakestore.Table.from_path(table.path)


# -- dynamic bucket tables -------------------------------------------------------------------------
@needs_oracle
@pytest.mark.oracle
@pytest.mark.parametrize("native", [False, True], ids=["pypaimon", "rust"])
def test_dynamic_bucket_table_written_by_another_engine_takes_upserts(tmp_path, native):
    oracle_write(tmp_path, "db.t", _rows([1, 2, 3], "a"), primary_keys=["id"], native=native)
    table = lakestore.Catalog(str(tmp_path)).get_table("db.t")
    assert "bucket" not in table.schema.options  # Paimon's default for primary-key tables: -1
    assert sorted(table.to_arrow()["v"].to_pylist()) == ["a1", "a2", "a3"]
    table.write_arrow(_rows([1, 4], "b"))
    expected = ["a2", "a3", "b1", "b4"]
    assert sorted(lakestore.Table.from_path(table.path).to_arrow()["v"].to_pylist()) == expected
    assert sorted(oracle_read(table.path)["v"].to_pylist()) == expected
    # and the other engine's next upsert still replaces lakestore's row
    oracle_write(tmp_path, "db.t", _rows([4], "c"), primary_keys=["id"], native=native)
    assert sorted(lakestore.Table.from_path(table.path).to_arrow()["v"].to_pylist()) == ["a2", "a3", "b1", "c4"]


def test_primary_key_tables_default_to_dynamic_buckets_as_in_paimon(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"])
    assert table.options.bucket == -1
    table.write_arrow(_rows([1, 2], "a"))
    assert (Path(table.path) / "index").is_dir()  # the keys' hash index


# -- what a snapshot carries forward ---------------------------------------------------------------
def test_new_snapshots_carry_forward_index_manifest_and_unknown_fields(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    table.write_arrow(_rows([1, 2], "a"))
    snapshot_path = Path(table.path) / "snapshot" / "snapshot-1"
    doc = json.loads(snapshot_path.read_text())
    index_manifest = "index-manifest-00000000-0000-0000-0000-000000000000-0"
    (Path(table.path) / "manifest" / index_manifest).write_bytes(b"index entries of another engine")
    doc.update({"indexManifest": index_manifest, "logOffsets": {"0": 42}, "someFutureField": {"nested": [1, 2]}})
    snapshot_path.write_text(json.dumps(doc))

    table.write_arrow(_rows([2, 3], "b"))
    table.compact(full=True)
    for snapshot_id in (2, 3):
        written = json.loads((Path(table.path) / "snapshot" / f"snapshot-{snapshot_id}").read_text())
        assert written["indexManifest"] == index_manifest
        assert written["logOffsets"] == {"0": 42}
        assert written["someFutureField"] == {"nested": [1, 2]}
    table.maintenance.remove_orphan_files(older_than_ms=FAR_FUTURE_MS)
    assert (Path(table.path) / "manifest" / index_manifest).exists()
    assert sorted(table.to_arrow()["v"].to_pylist()) == ["a1", "b2", "b3"]


# -- branches --------------------------------------------------------------------------------------
def _create_branch_from_tag(table: lakestore.Table, branch: str, tag: str) -> Path:
    """A branch as Paimon creates one from a tag: the tag's snapshot, the tag and the schemas
    copied under ``branch/branch-<name>/``; data and manifest files stay shared."""
    root = Path(table.path)
    target = root / "branch" / f"branch-{branch}"
    tag_doc = json.loads((root / "tag" / f"tag-{tag}").read_text())
    (target / "snapshot").mkdir(parents=True)
    (target / "tag").mkdir()
    shutil.copytree(root / "schema", target / "schema")
    shutil.copy(root / "tag" / f"tag-{tag}", target / "tag" / f"tag-{tag}")
    snapshot = {k: v for k, v in tag_doc.items() if not k.startswith("tag")}
    (target / "snapshot" / f"snapshot-{snapshot['id']}").write_text(json.dumps(snapshot))
    (target / "snapshot" / "LATEST").write_text(str(snapshot["id"]))
    return target


def test_files_referenced_only_by_a_branch_survive_expiration_and_orphan_cleanup(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(_rows([1, 2, 3], "a"))
    first_files = {f.file_name for f in live_files(table)}
    table.manage.create_tag("base", 1)
    _create_branch_from_tag(table, "dev", "base")
    table.manage.delete_tag("base")  # from now on only the branch holds snapshot 1's files
    table.write_arrow(_rows([1, 2, 3], "b"), overwrite=True)
    table.write_arrow(_rows([4], "c"))

    result = table.maintenance.expire_snapshots(num_retained_min=1, time_retained_ms=0, now_ms=LATER_MS)
    assert 1 in result.expired_snapshot_ids
    table.maintenance.remove_orphan_files(older_than_ms=FAR_FUTURE_MS)
    on_disk = {p.name for p in Path(table.path).rglob("*.parquet")}
    assert first_files <= on_disk
    # Everything the branch's snapshot references is still there and holds its rows.
    branch_snapshot = Snapshot.from_json((Path(table.path) / "branch" / "branch-dev" / "snapshot" / "snapshot-1").read_bytes(), source="b")
    files = TableFiles(table.store)
    assert all(Path(files.manifest_path(name)).exists() for name in files.manifest_names(branch_snapshot))
    rows = pa.concat_tables([pq.read_table(p, columns=["v"]) for p in files.live_paths(branch_snapshot)])
    assert sorted(rows["v"].to_pylist()) == ["a1", "a2", "a3"]


# -- option policy for existing tables -------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "readable"),
    [
        ({"sequence.snapshot-ordering": "true"}, False),
        ({"data-file.thin-mode": "true"}, False),
        ({"data-evolution.enabled": "true"}, False),
        ({"write.sequence-number-init-mode": "zero"}, True),
        ({"cross-partition-upsert.index-ttl": "1 d"}, True),
        ({"some.option.of.a.newer.paimon": "x"}, True),
    ],
    ids=lambda v: next(iter(v)) if isinstance(v, dict) else str(v),
)
def test_options_lakestore_cannot_honour_refuse_writes_by_name(tmp_path, options, readable):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    created = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    created.write_arrow(_rows([1, 2], "a"))
    table = _set_options_as_another_engine(created, options)
    name = next(iter(options))
    for attempt in (
        lambda: table.write_arrow(_rows([1], "b")),
        lambda: table.compact(full=True),
        lambda: table.maintenance.expire_snapshots(num_retained_min=1),
        lambda: table.manage.rollback_to(1),
    ):
        with pytest.raises(UnsupportedTableError, match=name):
            attempt()
    assert _snapshot_ids(table.path) == ["snapshot-1"]
    if readable:
        assert sorted(table.to_arrow()["v"].to_pylist()) == ["a1", "a2"]
        assert table.read_changes(from_snapshot_id=0).num_rows == 2
    else:
        with pytest.raises(UnsupportedTableError, match=name):
            table.to_arrow()
        with pytest.raises(UnsupportedTableError, match=name):
            table.read_changes(from_snapshot_id=0)


def test_options_safe_to_ignore_leave_the_table_fully_usable(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    created = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    created.write_arrow(_rows([1, 2], "a"))
    ignorable = {
        "lookup.cache-max-memory-size": "64 mb",
        "sink.parallelism": "4",
        "write-buffer-spillable": "true",
        "consumer.expiration-time": "1 d",
    }
    table = _set_options_as_another_engine(created, ignorable)
    table.write_arrow(_rows([2, 3], "b"))
    table.compact(full=True)
    table.maintenance.expire_snapshots(num_retained_min=1)
    assert sorted(table.to_arrow()["v"].to_pylist()) == ["a1", "b2", "b3"]
    with pytest.raises(lakestore.OptionError, match="sink.parallelism"):
        catalog.create_table("db.u", schema=SCHEMA, options={"sink.parallelism": "4"})


# -- first-row tables ------------------------------------------------------------------------------
@needs_oracle
@pytest.mark.oracle
def test_first_row_tables_written_by_lakestore_are_visible_to_paimon_readers(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2", "merge-engine": "first-row"})
    for tag, ids in (("a", [1, 2, 3]), ("b", [2, 3, 4, 5]), ("c", [5, 6])):
        table.write_arrow(_rows(ids, tag))
        assert all(f.level > 0 for f in live_files(table)), "a commit left rows in level 0, which Paimon readers skip"
    expected = pa.table({"id": [1, 2, 3, 4, 5, 6], "v": ["a1", "a2", "a3", "b4", "b5", "c6"]}, schema=SCHEMA)
    assert_same_rows(table.to_arrow(), expected, ["id"])
    assert_same_rows(oracle_read(table.path), expected, ["id"])
    assert_same_rows(oracle_read(table.path, native=True), expected, ["id"])


# -- time travel with the snapshot's schema --------------------------------------------------------
def test_time_travel_reads_with_the_schema_of_the_snapshot(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("a", pa.string()), ("b", pa.int32())])
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1"})
    first = table.write_arrow(pa.table({"id": [1, 2], "a": ["x", "y"], "b": [10, 20]}, schema=schema))
    assert first is not None
    table.manage.create_tag("v1", first.id)
    table = catalog.alter_table("db.t", [AddColumn("c", "DOUBLE")])
    table.write_arrow(pa.table({"id": [3], "a": ["z"], "b": [30], "c": [0.5]}))
    table = catalog.alter_table("db.t", [DropColumn("b")])
    # No commit since the drop: the latest snapshot is still of the old schema, yet a plain read
    # sees the table as it is now.
    assert table.to_arrow().column_names == ["id", "a", "c"]
    table.write_arrow(pa.table({"id": [4], "a": ["w"], "c": [1.5]}))

    v1 = pa.table({"id": [1, 2], "a": ["x", "y"], "b": pa.array([10, 20], pa.int32())})
    for read in (
        lambda: table.to_arrow(snapshot_id=1),
        lambda: table.to_arrow(tag="v1"),
        lambda: table.to_arrow(timestamp_ms=first.time_millis),
    ):
        got = read()
        assert got.column_names == ["id", "a", "b"]
        assert_same_rows(got, v1, ["id"])
    assert table.to_arrow(snapshot_id=2).column_names == ["id", "a", "b", "c"]
    assert table.to_arrow(snapshot_id=1, columns=["b"])["b"].to_pylist() == [10, 20]
    with pytest.raises(lakestore.SchemaMismatchError, match="c"):
        table.to_arrow(snapshot_id=1, columns=["c"])
    changes = table.read_changes(from_snapshot_id=0, to_snapshot_id=1)
    assert changes.column_names == ["id", "a", "b", "_row_kind"]
    assert table.to_arrow().column_names == ["id", "a", "c"]
    if oracle_available():
        assert_same_rows(oracle_read(table.path, snapshot_id=1), table.to_arrow(snapshot_id=1), ["id"])


# -- nested types ----------------------------------------------------------------------------------
def _add_foreign_column(table_path: str, column: dict) -> None:
    path = Path(table_path) / "schema" / "schema-0"
    doc = json.loads(path.read_text())
    doc["fields"].append(column)
    doc["highestFieldId"] = column["id"]
    path.write_text(json.dumps(doc))


def test_a_nested_column_written_by_another_engine_opens_and_reads(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, options={})
    _add_foreign_column(table.path, {"id": 2, "name": "tags", "type": {"type": "ARRAY NOT NULL", "element": "STRING"}})
    table = catalog.get_table("db.t")
    assert table.schema.field("tags").type == DataType.array(parse_type("STRING"), nullable=False)
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"], "tags": [["x", None], []]}))
    assert table.to_arrow().sort_by("id")["tags"].to_pylist() == [["x", None], []]


def test_an_unknown_nested_type_is_refused_as_unsupported_not_as_corrupt(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, options={})
    # a nested type no Paimon version has (VECTOR, which 1.4 added, is read now)
    _add_foreign_column(table.path, {"id": 2, "name": "emb", "type": {"type": "TENSOR", "element": "FLOAT", "shape": [3]}})
    with pytest.raises(UnsupportedTypeError, match="'emb'.*TENSOR"):
        catalog.get_table("db.t")
