"""Index manifests: written as Paimon 0.9's Java core writes them, combined per commit from the
index files commit messages add and retire, carried forward by commits that change none."""

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
    IndexFileMeta,
    IndexManifestEntry,
    combine,
    read_index_manifest,
    write_index_manifest,
)
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
PARTITION = b"\x00" * 8  # the empty BinaryRow of an unpartitioned table


def dv_file(name: str, data_file: str) -> IndexFileMeta:
    return IndexFileMeta(DELETION_VECTORS_INDEX, name, 31, 1, (DeletionVectorRange(data_file, 1, 22),))


def test_index_manifest_layout_is_javas(tmp_path):
    entries = [IndexManifestEntry(0, PARTITION, 0, dv_file("index-a-0", "data-1.parquet"))]
    name = write_index_manifest(LocalFileIO(), str(tmp_path), entries)
    assert name.startswith("index-manifest-") and name.endswith("-0")
    with open(tmp_path / "manifest" / name, "rb") as fh:
        reader = fastavro.reader(fh)
        schema = reader.writer_schema
        records = list(reader)
    # Paimon 0.9's field names and order, a plain record at the top (no null union)
    assert schema["name"] == "org.apache.paimon.avro.generated.record"
    assert [f["name"] for f in schema["fields"]] == [
        "_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_INDEX_TYPE", "_FILE_NAME", "_FILE_SIZE", "_ROW_COUNT", "_DELETIONS_VECTORS_RANGES",
    ]  # fmt: skip
    assert records[0]["_DELETIONS_VECTORS_RANGES"] == [{"f0": "data-1.parquet", "f1": 1, "f2": 22}]
    assert read_index_manifest(LocalFileIO(), str(tmp_path), name) == entries


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
    assert [e.index_file for e in read_index_manifest(table.file_io, table.path, snapshot.index_manifest)] == [first]
    carried = table.write_arrow(pa.table({"id": [2], "v": ["b"]}, schema=SCHEMA))
    assert carried is not None and carried.index_manifest == snapshot.index_manifest
    second = _index_file(table, "index-2-0")
    replaced = table.new_commit(commit_user="u").commit(
        [CommitMessage(PARTITION, 0, 1, new_index_files=(second,), deleted_index_files=(first,))], 2
    )[-1]
    assert [e.index_file for e in read_index_manifest(table.file_io, table.path, replaced.index_manifest)] == [second]
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
