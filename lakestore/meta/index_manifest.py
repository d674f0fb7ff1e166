"""Index manifests (``manifest/index-manifest-<uuid>-0``): the index files a snapshot holds, per
(partition, bucket): ``HASH`` key indexes of dynamic-bucket tables and ``DELETION_VECTORS`` files
of deletion-vector tables, both under ``index/``.

Written as Paimon 2.0's Java core writes them (``IndexManifestEntrySerializer``, version 1): a
plain Avro record (no ``null`` union at the top), every live file as an ADD entry; each snapshot
that changes index files writes the whole list anew, and one that does not carries its parent's
manifest forward. Paimon 2.0's record is 0.9's plus three nullable fields: ``_CARDINALITY`` in each
deletion-vector range (1.0; lakestore writes it for every vector it writes), ``_EXTERNAL_PATH``
(1.3) and ``_GLOBAL_INDEX`` (1.4). Entries lakestore does not rewrite keep all three as read.
Readers of every version resolve the record by field name, so 0.9 readers skip the new fields.
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

_DV_RANGE_RECORD = f"{_NAMESPACE}.record__DELETIONS_VECTORS_RANGES"
_GLOBAL_INDEX_RECORD = f"{_NAMESPACE}.record__GLOBAL_INDEX"


def _nullable(avro_type: Any) -> dict[str, Any]:
    return {"type": ["null", avro_type], "default": None}


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
                **_nullable(
                    {
                        "type": "array",
                        "items": [
                            "null",
                            {
                                "type": "record",
                                "name": _DV_RANGE_RECORD,
                                "fields": [
                                    {"name": "f0", "type": "string"},
                                    {"name": "f1", "type": "int"},
                                    {"name": "f2", "type": "int"},
                                    {"name": "_CARDINALITY", **_nullable("long")},
                                ],
                            },
                        ],
                    }
                ),
            },
            {"name": "_EXTERNAL_PATH", **_nullable("string")},
            {
                "name": "_GLOBAL_INDEX",
                **_nullable(
                    {
                        "type": "record",
                        "name": _GLOBAL_INDEX_RECORD,
                        "fields": [
                            {"name": "_ROW_RANGE_START", "type": "long"},
                            {"name": "_ROW_RANGE_END", "type": "long"},
                            {"name": "_INDEX_FIELD_ID", "type": "int"},
                            {"name": "_EXTRA_FIELD_IDS", **_nullable({"type": "array", "items": "int"})},
                            {"name": "_INDEX_META", **_nullable("bytes")},
                            {"name": "_SOURCE_META", **_nullable("bytes")},
                        ],
                    }
                ),
            },
        ],
    }
)


@dataclass(frozen=True, slots=True)
class DeletionVectorRange:
    """Where one data file's vector lies in a deletion-vector index file (Paimon's
    ``DeletionVectorMeta``): the offset of its size int, its length as the vector's kind counts it,
    and its number of deleted rows (null in files Paimon 0.9 wrote)."""

    data_file: str
    offset: int
    length: int
    cardinality: int | None = None


@dataclass(frozen=True, slots=True)
class GlobalIndexMeta:
    """Paimon 1.4's ``_GLOBAL_INDEX`` of an index file (global indexes over row ids of
    data-evolution tables), carried unchanged: lakestore neither reads nor writes such indexes."""

    row_range_start: int
    row_range_end: int
    index_field_id: int
    extra_field_ids: tuple[int, ...] | None = None
    index_meta: bytes | None = None
    source_meta: bytes | None = None

    def to_avro(self) -> dict[str, Any]:
        return {
            "_ROW_RANGE_START": self.row_range_start,
            "_ROW_RANGE_END": self.row_range_end,
            "_INDEX_FIELD_ID": self.index_field_id,
            "_EXTRA_FIELD_IDS": list(self.extra_field_ids) if self.extra_field_ids is not None else None,
            "_INDEX_META": self.index_meta,
            "_SOURCE_META": self.source_meta,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> GlobalIndexMeta:
        extra = rec.get("_EXTRA_FIELD_IDS")
        return cls(
            int(rec["_ROW_RANGE_START"]),
            int(rec["_ROW_RANGE_END"]),
            int(rec["_INDEX_FIELD_ID"]),
            tuple(int(x) for x in extra) if extra is not None else None,
            rec.get("_INDEX_META"),
            rec.get("_SOURCE_META"),
        )


@dataclass(frozen=True, slots=True)
class IndexFileMeta:
    index_type: str  # HASH_INDEX or DELETION_VECTORS_INDEX (or another engine's type, carried)
    file_name: str  # under index/
    file_size: int
    row_count: int
    dv_ranges: tuple[DeletionVectorRange, ...] | None = None
    external_path: str | None = None  # the file's absolute path when it is not under index/ (1.3)
    global_index: GlobalIndexMeta | None = None  # (1.4)


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
            ranges = [{"f0": r.data_file, "f1": r.offset, "f2": r.length, "_CARDINALITY": r.cardinality} for r in f.dv_ranges]
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
            "_EXTERNAL_PATH": f.external_path,
            "_GLOBAL_INDEX": f.global_index.to_avro() if f.global_index is not None else None,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> IndexManifestEntry:
        if rec.get("_VERSION", 1) != 1:
            raise ValueError(f"unsupported index manifest entry version {rec.get('_VERSION')!r}")
        raw_ranges = rec.get("_DELETIONS_VECTORS_RANGES")
        ranges = None
        if raw_ranges is not None:
            ranges = tuple(
                DeletionVectorRange(
                    r["f0"], int(r["f1"]), int(r["f2"]), int(r["_CARDINALITY"]) if r.get("_CARDINALITY") is not None else None
                )
                for r in raw_ranges
                if r is not None
            )
        global_index = rec.get("_GLOBAL_INDEX")
        meta = IndexFileMeta(
            rec["_INDEX_TYPE"],
            rec["_FILE_NAME"],
            int(rec["_FILE_SIZE"]),
            int(rec["_ROW_COUNT"]),
            ranges,
            rec.get("_EXTERNAL_PATH"),
            GlobalIndexMeta.from_avro(global_index) if global_index is not None else None,
        )
        return cls(int(rec["_KIND"]), rec["_PARTITION"], int(rec["_BUCKET"]), meta)


def index_manifest_path(table_path: str, name: str) -> str:
    return f"{table_path}/manifest/{name}"


def index_file_path(table_path: str, file_name: str, external_path: str | None = None) -> str:
    """Where an index file is: its external path when it has one, else under ``index/``."""
    return external_path or f"{table_path}/{INDEX_DIR}/{file_name}"


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


def write_index_manifest(file_io: FileIO, table_path: str, entries: Iterable[IndexManifestEntry], *, compression: str = "zstd") -> str:
    """Publish a new index manifest (whole, under a fresh name); returns its name. Compressed as
    Paimon compresses it (``manifest.compression``, default zstd)."""
    name = f"index-manifest-{uuid.uuid4()}-0"
    buffer = io.BytesIO()
    codec = {"zstd": "zstandard"}.get(compression, compression)
    fastavro.writer(buffer, INDEX_MANIFEST_SCHEMA, [e.to_avro() for e in entries], codec=codec)
    file_io.write_bytes(index_manifest_path(table_path, name), buffer.getvalue(), overwrite=False)
    return name


def combine(
    live: Sequence[IndexManifestEntry],
    added: Sequence[IndexManifestEntry],
    deleted: Sequence[IndexManifestEntry],
    *,
    global_vectors: bool = False,
) -> list[IndexManifestEntry]:
    """The live index files after a commit, as Paimon's IndexManifestFileHandler combines them:
    deleted files leave; a bucket that gets a new file of an index type drops its older ones of
    that type (each holds the bucket's whole set of vectors or key hashes); new files join.
    ``global_vectors`` (append tables without buckets, Paimon's ``GlobalCombiner``): a partition
    holds several deletion-vector files, and only the deleted ones leave."""
    gone = {e.index_file.file_name for e in deleted}
    replaced = {
        (e.partition, e.bucket, e.index_file.index_type)
        for e in added
        if not (global_vectors and e.index_file.index_type == DELETION_VECTORS_INDEX)
    }
    kept = [e for e in live if e.index_file.file_name not in gone and (e.partition, e.bucket, e.index_file.index_type) not in replaced]
    return kept + [IndexManifestEntry(ADD, e.partition, e.bucket, e.index_file) for e in added]
