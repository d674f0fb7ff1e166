"""Index manifests: written as Paimon 2.0's Java core writes them (0.9's record plus
``_CARDINALITY``, ``_EXTERNAL_PATH``, ``_GLOBAL_INDEX``; zstd), combined per commit from the index
files commit messages add and retire, carried forward by commits that change none."""

from __future__ import annotations

from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import CommitConflictError
from lakestore.io.fileio import LocalFileIO
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.index_manifest import (
    DELETION_VECTORS_INDEX,
    HASH_INDEX,
    DeletionVectorRange,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
    combine,
    read_index_manifest,
    write_index_manifest,
)
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
PARTITION = b"\x00" * 8  # the empty BinaryRow of an unpartitioned table


def dv_file(name: str, data_file: str, cardinality: int | None = 3) -> IndexFileMeta:
    return IndexFileMeta(DELETION_VECTORS_INDEX, name, 31, 1, (DeletionVectorRange(data_file, 1, 22, cardinality),))


# Paimon 2.0's IndexManifestEntry through its Avro converter (IndexManifestEntrySerializer, version 1)
JAVA_2_SCHEMA = {
    "type": "record",
    "name": "org.apache.paimon.avro.generated.record",
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"},
        {"name": "_BUCKET", "type": "int"},
        {"name": "_INDEX_TYPE", "type": "string"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        {
            "default": None,
            "name": "_DELETIONS_VECTORS_RANGES",
            "type": [
                "null",
                {
                    "type": "array",
                    "items": [
                        "null",
                        {
                            "type": "record",
                            "name": "org.apache.paimon.avro.generated.record__DELETIONS_VECTORS_RANGES",
                            "fields": [
                                {"name": "f0", "type": "string"},
                                {"name": "f1", "type": "int"},
                                {"name": "f2", "type": "int"},
                                {"default": None, "name": "_CARDINALITY", "type": ["null", "long"]},
                            ],
                        },
                    ],
                },
            ],
        },
        {"default": None, "name": "_EXTERNAL_PATH", "type": ["null", "string"]},
        {
            "default": None,
            "name": "_GLOBAL_INDEX",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "org.apache.paimon.avro.generated.record__GLOBAL_INDEX",
                    "fields": [
                        {"name": "_ROW_RANGE_START", "type": "long"},
                        {"name": "_ROW_RANGE_END", "type": "long"},
                        {"name": "_INDEX_FIELD_ID", "type": "int"},
                        {"default": None, "name": "_EXTRA_FIELD_IDS", "type": ["null", {"type": "array", "items": "int"}]},
                        {"default": None, "name": "_INDEX_META", "type": ["null", "bytes"]},
                        {"default": None, "name": "_SOURCE_META", "type": ["null", "bytes"]},
                    ],
                },
            ],
        },
    ],
}


def _canonical(schema: object) -> object:
    """A writer schema without fastavro's additions, keys sorted, for comparison."""
    if isinstance(schema, dict):
        return {k: _canonical(v) for k, v in sorted(schema.items()) if k != "__fastavro_parsed" and k != "__named_schemas"}
    if isinstance(schema, list):
        return [_canonical(v) for v in schema]
    return schema


def test_index_manifest_layout_is_javas(tmp_path):
    entries = [IndexManifestEntry(0, PARTITION, 0, dv_file("index-a-0", "data-1.parquet"))]
    name = write_index_manifest(LocalFileIO(), str(tmp_path), entries)
    assert name.startswith("index-manifest-") and name.endswith("-0")
    with open(tmp_path / "manifest" / name, "rb") as fh:
        reader = fastavro.reader(fh)
        schema = reader.writer_schema
        codec = reader.codec
        records = list(reader)
    # Paimon 2.0's record, field for field, a plain record at the top (no null union), zstd
    assert _canonical(schema) == _canonical(JAVA_2_SCHEMA)
    assert codec == "zstandard"
    assert records[0]["_DELETIONS_VECTORS_RANGES"] == [{"f0": "data-1.parquet", "f1": 1, "f2": 22, "_CARDINALITY": 3}]
    assert records[0]["_EXTERNAL_PATH"] is None and records[0]["_GLOBAL_INDEX"] is None
    assert read_index_manifest(LocalFileIO(), str(tmp_path), name) == entries


def test_fields_of_later_versions_are_carried_unchanged(tmp_path):
    """Entries another engine wrote keep their external path and global index when lakestore
    rewrites the manifest; Paimon 0.9's records (no cardinality) still read."""
    global_index = GlobalIndexMeta(0, 99, 3, (4, 5), b"meta", None)
    foreign = IndexManifestEntry(
        0, PARTITION, 0, IndexFileMeta("BTREE", "index-g-0", 10, 100, None, "s3://bucket/t/index/index-g-0", global_index)
    )
    old = IndexManifestEntry(0, PARTITION, 1, dv_file("index-o-0", "data-2.parquet", cardinality=None))
    name = write_index_manifest(LocalFileIO(), str(tmp_path), combine([foreign, old], [], []))
    assert read_index_manifest(LocalFileIO(), str(tmp_path), name) == [foreign, old]
    # a 0.9 record (no _CARDINALITY, _EXTERNAL_PATH, _GLOBAL_INDEX) reads with nulls
    legacy = fastavro.parse_schema(
        {
            "type": "record",
            "name": "org.apache.paimon.avro.generated.record",
            "fields": [f for f in JAVA_2_SCHEMA["fields"] if f["name"] not in ("_EXTERNAL_PATH", "_GLOBAL_INDEX")][:8]
            + [
                {
                    "name": "_DELETIONS_VECTORS_RANGES",
                    "type": [
                        "null",
                        {
                            "type": "array",
                            "items": [
                                "null",
                                {
                                    "type": "record",
                                    "name": "org.apache.paimon.avro.generated.record__DELETIONS_VECTORS_RANGES",
                                    "fields": [
                                        {"name": "f0", "type": "string"},
                                        {"name": "f1", "type": "int"},
                                        {"name": "f2", "type": "int"},
                                    ],
                                },
                            ],
                        },
                    ],
                    "default": None,
                }
            ],
        }
    )
    record = {k: v for k, v in old.to_avro().items() if k not in ("_EXTERNAL_PATH", "_GLOBAL_INDEX")}
    record["_DELETIONS_VECTORS_RANGES"] = [{"f0": "data-2.parquet", "f1": 1, "f2": 22}]
    with open(tmp_path / "manifest" / "index-manifest-legacy-0", "wb") as fh:
        fastavro.writer(fh, legacy, [record])
    assert read_index_manifest(LocalFileIO(), str(tmp_path), "index-manifest-legacy-0") == [old]


def test_combine_replaces_a_buckets_vectors_and_drops_deleted_files():
    old_dv = IndexManifestEntry(0, PARTITION, 0, dv_file("index-old-0", "a"))
    other_bucket = IndexManifestEntry(0, PARTITION, 1, dv_file("index-b1-0", "b"))
    hash_index = IndexManifestEntry(0, PARTITION, 0, IndexFileMeta(HASH_INDEX, "index-h-0", 12, 3))
    new_dv = IndexManifestEntry(0, PARTITION, 0, dv_file("index-new-0", "a"))
    live = combine([old_dv, other_bucket, hash_index], [new_dv], [hash_index])
    assert [e.index_file.file_name for e in live] == ["index-b1-0", "index-new-0"]


@pytest.fixture
def table(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA))
    return t


def _index_file(table: lakestore.Table, name: str) -> IndexFileMeta:
    path = Path(table.path) / "index" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"\x01")
    return IndexFileMeta(HASH_INDEX, name, 1, 0)


def test_commits_write_combine_and_carry_the_index_manifest(table):
    first = _index_file(table, "index-1-0")
    committed = table.new_commit(commit_user="u").commit([CommitMessage(PARTITION, 0, 1, new_index_files=(first,))], 1)
    snapshot = committed[-1]
    assert snapshot.index_manifest is not None
    assert [e.index_file for e in read_index_manifest(table.store.file_io, table.path, snapshot.index_manifest)] == [first]
    carried = table.write_arrow(pa.table({"id": [2], "v": ["b"]}, schema=SCHEMA))
    assert carried is not None and carried.index_manifest == snapshot.index_manifest
    second = _index_file(table, "index-2-0")
    replaced = table.new_commit(commit_user="u").commit(
        [CommitMessage(PARTITION, 0, 1, new_index_files=(second,), deleted_index_files=(first,))], 2
    )[-1]
    assert [e.index_file for e in read_index_manifest(table.store.file_io, table.path, replaced.index_manifest)] == [second]
    # retiring a file that is no longer live is a conflict; the loser's new index files go
    third = _index_file(table, "index-3-0")
    with pytest.raises(CommitConflictError, match="index-1-0"):
        table.new_commit(commit_user="v").commit(
            [CommitMessage(PARTITION, 0, 1, new_index_files=(third,), deleted_index_files=(first,))], BATCH_COMMIT_IDENTIFIER
        )
    assert not (Path(table.path) / "index" / "index-3-0").exists()
    assert (Path(table.path) / "index" / "index-2-0").exists()
    assert sorted(table.to_arrow()["v"].to_pylist()) == ["a", "b"]


def test_commit_messages_carry_index_files_through_bytes():
    message = CommitMessage(
        PARTITION,
        0,
        1,
        new_index_files=(dv_file("index-a-0", "data-1.parquet"),),
        deleted_index_files=(IndexFileMeta(HASH_INDEX, "h", 1, 0),),
    )
    assert CommitMessage.from_bytes(message.to_bytes()) == message
