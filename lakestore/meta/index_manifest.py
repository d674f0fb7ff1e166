"""Index manifests (``manifest/index-manifest-<uuid>-0``): the index files a snapshot holds, per
(partition, bucket): ``HASH`` key indexes of dynamic-bucket tables and ``DELETION_VECTORS`` files
of deletion-vector tables, both under ``index/``.

Written as Paimon 0.9's Java core writes them: a plain Avro record (no ``null`` union at the top),
every live file as an ADD entry; each snapshot that changes index files writes the whole list
anew, and one that does not carries its parent's manifest forward.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import fastavro

from lakestore.errors import CorruptMetadataError
from lakestore.format.hash_index import HASH_INDEX as HASH_INDEX  # re-exported: both index types are named here
from lakestore.io.fileio import FileIO

DELETION_VECTORS_INDEX = "DELETION_VECTORS"
ADD = 0
DELETE = 1
INDEX_DIR = "index"
_NAMESPACE = "org.apache.paimon.avro.generated"

INDEX_MANIFEST_SCHEMA = fastavro.parse_schema(
    {
        "type": "record",
        "name": f"{_NAMESPACE}.record",
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
                "name": "_DELETIONS_VECTORS_RANGES",
                "type": [
                    "null",
                    {
                        "type": "array",
                        "items": [
                            "null",
                            {
                                "type": "record",
                                "name": f"{_NAMESPACE}.record__DELETIONS_VECTORS_RANGES",
                                "fields": [{"name": "f0", "type": "string"}, {"name": "f1", "type": "int"}, {"name": "f2", "type": "int"}],
                            },
                        ],
                    },
                ],
                "default": None,
            },
        ],
    }
)


@dataclass(frozen=True, slots=True)
class DeletionVectorRange:
    """Where one data file's vector lies in a deletion-vector index file."""

    data_file: str
    offset: int
    length: int
    cardinality: int | None = None


@dataclass(frozen=True, slots=True)
class IndexFileMeta:
    index_type: str  # HASH_INDEX or DELETION_VECTORS_INDEX
    file_name: str  # under index/
    file_size: int
    row_count: int
    dv_ranges: tuple[DeletionVectorRange, ...] | None = None


@dataclass(frozen=True, slots=True)
class IndexManifestEntry:
    kind: int
    partition: bytes
    bucket: int
    index_file: IndexFileMeta

    def to_avro(self) -> dict[str, Any]:
        f = self.index_file
        ranges = None
        if f.dv_ranges is not None:
            ranges = [{"f0": r.data_file, "f1": r.offset, "f2": r.length} for r in f.dv_ranges]
        return {
            "_VERSION": 1,
            "_KIND": self.kind,
            "_PARTITION": self.partition,
            "_BUCKET": self.bucket,
            "_INDEX_TYPE": f.index_type,
            "_FILE_NAME": f.file_name,
            "_FILE_SIZE": f.file_size,
            "_ROW_COUNT": f.row_count,
            "_DELETIONS_VECTORS_RANGES": ranges,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> IndexManifestEntry:
        raw_ranges = rec.get("_DELETIONS_VECTORS_RANGES")
        ranges = None
        if raw_ranges is not None:
            ranges = tuple(
                DeletionVectorRange(r["f0"], int(r["f1"]), int(r["f2"]), r.get("_CARDINALITY")) for r in raw_ranges if r is not None
            )
        meta = IndexFileMeta(rec["_INDEX_TYPE"], rec["_FILE_NAME"], int(rec["_FILE_SIZE"]), int(rec["_ROW_COUNT"]), ranges)
        return cls(int(rec["_KIND"]), rec["_PARTITION"], int(rec["_BUCKET"]), meta)


def index_manifest_path(table_path: str, name: str) -> str:
    return f"{table_path}/manifest/{name}"


def index_file_path(table_path: str, file_name: str) -> str:
    return f"{table_path}/{INDEX_DIR}/{file_name}"


def read_index_manifest(file_io: FileIO, table_path: str, name: str) -> list[IndexManifestEntry]:
    path = index_manifest_path(table_path, name)
    try:
        data = file_io.read_bytes(path)
    except FileNotFoundError as exc:
        raise CorruptMetadataError(path, "index manifest is missing") from exc
    try:
        return [IndexManifestEntry.from_avro(cast(dict[str, Any], r)) for r in fastavro.reader(io.BytesIO(data)) if r is not None]
    except Exception as exc:  # fastavro and the record checks raise many types on garbage input
        raise CorruptMetadataError(path, f"unreadable index manifest: {exc!r}") from exc


def write_index_manifest(file_io: FileIO, table_path: str, entries: Iterable[IndexManifestEntry]) -> str:
    """Publish a new index manifest (whole, under a fresh name); returns its name."""
    name = f"index-manifest-{uuid.uuid4()}-0"
    buffer = io.BytesIO()
    fastavro.writer(buffer, INDEX_MANIFEST_SCHEMA, [e.to_avro() for e in entries], codec="null")
    file_io.write_bytes(index_manifest_path(table_path, name), buffer.getvalue(), overwrite=False)
    return name


def combine(
    live: Sequence[IndexManifestEntry], added: Sequence[IndexManifestEntry], deleted: Sequence[IndexManifestEntry]
) -> list[IndexManifestEntry]:
    """The live index files after a commit, as Paimon's IndexManifestFileHandler combines them:
    deleted files leave; a bucket that gets a new file of an index type drops its older ones of
    that type (each holds the bucket's whole set of vectors or key hashes); new files join."""
    gone = {e.index_file.file_name for e in deleted}
    replaced = {(e.partition, e.bucket, e.index_file.index_type) for e in added}
    kept = [e for e in live if e.index_file.file_name not in gone and (e.partition, e.bucket, e.index_file.index_type) not in replaced]
    return kept + [IndexManifestEntry(ADD, e.partition, e.bucket, e.index_file) for e in added]
