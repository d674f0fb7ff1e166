"""CommitMessage: what a writer hands to the committer for one (partition, bucket).

Like LevelDB's VersionEdit, it is plain data, so executors can write and one driver commit.
It serializes to Avro bytes (schemaless, with a version byte) for transport.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, cast

import fastavro

from lakestore.errors import CorruptMetadataError
from lakestore.meta.index_manifest import DeletionVectorRange, IndexFileMeta
from lakestore.meta.manifest import DATA_FILE_SCHEMA, DataFileMeta

_FORMAT_VERSION = 2
_FILES = {"type": "array", "items": "org.apache.paimon.avro.generated.record__FILE"}
_INDEX_FILE = {
    "type": "record",
    "name": "IndexFile",
    "fields": [
        {"name": "index_type", "type": "string"},
        {"name": "file_name", "type": "string"},
        {"name": "file_size", "type": "long"},
        {"name": "row_count", "type": "long"},
        {
            "name": "dv_ranges",
            "type": [
                "null",
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "DeletionVectorRange",
                        "fields": [
                            {"name": "data_file", "type": "string"},
                            {"name": "offset", "type": "int"},
                            {"name": "length", "type": "int"},
                            {"name": "cardinality", "type": ["null", "long"]},
                        ],
                    },
                },
            ],
        },
    ],
}
_SCHEMA = fastavro.parse_schema(
    {
        "type": "record",
        "name": "CommitMessage",
        "namespace": "lakestore",
        "fields": [
            {"name": "partition", "type": "bytes"},
            {"name": "bucket", "type": "int"},
            {"name": "total_buckets", "type": "int"},
            {"name": "new_files", "type": {"type": "array", "items": DATA_FILE_SCHEMA}},
            {"name": "changelog_files", "type": _FILES},
            {"name": "compact_before", "type": _FILES},
            {"name": "compact_after", "type": _FILES},
            {"name": "compact_changelog_files", "type": _FILES},
            {"name": "new_index_files", "type": {"type": "array", "items": _INDEX_FILE}},
            {"name": "deleted_index_files", "type": {"type": "array", "items": "lakestore.IndexFile"}},
        ],
    }
)


@dataclass
class CompactResult:
    """Files a compaction removed and the files it produced (upgrades appear in both, at
    their old and new level)."""

    before: list[DataFileMeta] = field(default_factory=list)
    after: list[DataFileMeta] = field(default_factory=list)
    changelog: list[DataFileMeta] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.before and not self.after and not self.changelog


@dataclass(frozen=True)
class CommitMessage:
    partition: bytes
    bucket: int
    total_buckets: int
    new_files: tuple[DataFileMeta, ...] = ()
    changelog_files: tuple[DataFileMeta, ...] = ()
    compact_before: tuple[DataFileMeta, ...] = ()
    compact_after: tuple[DataFileMeta, ...] = ()
    compact_changelog_files: tuple[DataFileMeta, ...] = ()
    # index files (under index/) this commit adds or retires: deletion vectors, hash indexes
    new_index_files: tuple[IndexFileMeta, ...] = ()
    deleted_index_files: tuple[IndexFileMeta, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (
            self.new_files
            or self.changelog_files
            or self.compact_before
            or self.compact_after
            or self.compact_changelog_files
            or self.new_index_files
            or self.deleted_index_files
        )

    def written_files(self) -> tuple[DataFileMeta, ...]:
        """Files this message's writer created (the ones to delete if the commit does not land)."""
        # An upgraded file keeps its name (it only changes level): it was not written here.
        upgraded = {f.file_name for f in self.compact_before}
        created = tuple(f for f in self.compact_after if f.file_name not in upgraded)
        return self.new_files + self.changelog_files + created + self.compact_changelog_files

    def to_bytes(self) -> bytes:
        """The message as bytes (Avro, with a version byte), read back by :meth:`from_bytes`."""
        record: dict[str, Any] = {
            "partition": self.partition,
            "bucket": self.bucket,
            "total_buckets": self.total_buckets,
        }
        for name in ("new_files", "changelog_files", "compact_before", "compact_after", "compact_changelog_files"):
            record[name] = [f.to_avro() for f in getattr(self, name)]
        for name in ("new_index_files", "deleted_index_files"):
            record[name] = [_index_file_to_avro(f) for f in getattr(self, name)]
        buffer = io.BytesIO()
        buffer.write(bytes([_FORMAT_VERSION]))
        fastavro.schemaless_writer(buffer, _SCHEMA, record)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> CommitMessage:
        """The message ``to_bytes`` serialized (a Spark task sends its messages to the driver so).

        Raises:
            CorruptMetadataError: ``data`` is not a serialized commit message of this version.
        """
        if not data or data[0] != _FORMAT_VERSION:
            raise CorruptMetadataError("<commit message>", "unknown serialization version")
        try:
            record = cast(dict[str, Any], fastavro.schemaless_reader(io.BytesIO(data[1:]), _SCHEMA, None))
        except Exception as exc:  # fastavro raises many types on garbage input
            raise CorruptMetadataError("<commit message>", repr(exc)) from exc

        def files(name: str) -> tuple[DataFileMeta, ...]:
            return tuple(DataFileMeta.from_avro(f) for f in record[name])

        def index_files(name: str) -> tuple[IndexFileMeta, ...]:
            return tuple(_index_file_from_avro(f) for f in record[name])

        return cls(
            record["partition"],
            record["bucket"],
            record["total_buckets"],
            new_files=files("new_files"),
            changelog_files=files("changelog_files"),
            compact_before=files("compact_before"),
            compact_after=files("compact_after"),
            compact_changelog_files=files("compact_changelog_files"),
            new_index_files=index_files("new_index_files"),
            deleted_index_files=index_files("deleted_index_files"),
        )


def _index_file_to_avro(f: IndexFileMeta) -> dict[str, Any]:
    ranges = None
    if f.dv_ranges is not None:
        ranges = [{"data_file": r.data_file, "offset": r.offset, "length": r.length, "cardinality": r.cardinality} for r in f.dv_ranges]
    return {"index_type": f.index_type, "file_name": f.file_name, "file_size": f.file_size, "row_count": f.row_count, "dv_ranges": ranges}


def _index_file_from_avro(rec: dict[str, Any]) -> IndexFileMeta:
    ranges = None
    if rec["dv_ranges"] is not None:
        ranges = tuple(DeletionVectorRange(r["data_file"], r["offset"], r["length"], r["cardinality"]) for r in rec["dv_ranges"])
    return IndexFileMeta(rec["index_type"], rec["file_name"], rec["file_size"], rec["row_count"], ranges)
