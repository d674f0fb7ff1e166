"""Manifest entries, manifest files and manifest lists (Avro), with Paimon's exact field names.

Bulk metadata rows are small frozen slotted records; Avro encoding goes through fastavro.
"""

from __future__ import annotations

import datetime as dt
import io
import itertools
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import fastavro

from lakestore.errors import CorruptMetadataError
from lakestore.io.fileio import FileIO

ADD = 0
DELETE = 1
FILE_SOURCE_APPEND = 0
FILE_SOURCE_COMPACT = 1
_NAMESPACE = "org.apache.paimon.avro.generated"


def _nullable(avro_type: Any) -> dict[str, Any]:
    return {"type": ["null", avro_type], "default": None}


def _stats_schema(name: str) -> dict[str, Any]:
    return {
        "type": "record",
        "name": name,
        "namespace": _NAMESPACE,
        "fields": [
            {"name": "_MIN_VALUES", "type": "bytes"},
            {"name": "_MAX_VALUES", "type": "bytes"},
            {"name": "_NULL_COUNTS", **_nullable({"type": "array", "items": ["null", "long"]})},
        ],
    }


_STRINGS = {"type": "array", "items": "string"}

DATA_FILE_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record__FILE",
    "namespace": _NAMESPACE,
    "fields": [
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        {"name": "_MIN_KEY", "type": "bytes"},
        {"name": "_MAX_KEY", "type": "bytes"},
        {"name": "_KEY_STATS", "type": _stats_schema("record__FILE__KEY_STATS")},
        {"name": "_VALUE_STATS", "type": _stats_schema("record__FILE__VALUE_STATS")},
        {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_SCHEMA_ID", "type": "long"},
        {"name": "_LEVEL", "type": "int"},
        {"name": "_EXTRA_FILES", "type": _STRINGS},
        {"name": "_CREATION_TIME", **_nullable({"type": "long", "logicalType": "timestamp-millis"})},
        {"name": "_DELETE_ROW_COUNT", **_nullable("long")},
        {"name": "_EMBEDDED_FILE_INDEX", **_nullable("bytes")},
        {"name": "_FILE_SOURCE", **_nullable("int")},
        {"name": "_VALUE_STATS_COLS", **_nullable(_STRINGS)},
        {"name": "_EXTERNAL_PATH", **_nullable("string")},
        {"name": "_FIRST_ROW_ID", **_nullable("long")},
        {"name": "_WRITE_COLS", **_nullable(_STRINGS)},
        {"name": "_WRITE_COLS_SEQUENCES", **_nullable({"type": "array", "items": "long"})},
    ],
}

MANIFEST_ENTRY_SCHEMA = fastavro.parse_schema(
    [
        "null",
        {
            "type": "record",
            "name": "record",
            "namespace": _NAMESPACE,
            "fields": [
                {"name": "_VERSION", "type": "int"},
                {"name": "_KIND", "type": "int"},
                {"name": "_PARTITION", "type": "bytes"},
                {"name": "_BUCKET", "type": "int"},
                {"name": "_TOTAL_BUCKETS", "type": "int"},
                {"name": "_FILE", "type": DATA_FILE_SCHEMA},
            ],
        },
    ]
)

MANIFEST_LIST_SCHEMA = fastavro.parse_schema(
    [
        "null",
        {
            "type": "record",
            "name": "record",
            "namespace": _NAMESPACE,
            "fields": [
                {"name": "_VERSION", "type": "int"},
                {"name": "_FILE_NAME", "type": "string"},
                {"name": "_FILE_SIZE", "type": "long"},
                {"name": "_NUM_ADDED_FILES", "type": "long"},
                {"name": "_NUM_DELETED_FILES", "type": "long"},
                {"name": "_PARTITION_STATS", "type": _stats_schema("record__PARTITION_STATS")},
                {"name": "_SCHEMA_ID", "type": "long"},
                {"name": "_MIN_BUCKET", **_nullable("int")},
                {"name": "_MAX_BUCKET", **_nullable("int")},
                {"name": "_MIN_LEVEL", **_nullable("int")},
                {"name": "_MAX_LEVEL", **_nullable("int")},
                {"name": "_MIN_ROW_ID", **_nullable("long")},
                {"name": "_MAX_ROW_ID", **_nullable("long")},
                {"name": "_TOTAL_BUCKETS", **_nullable("int")},
                {"name": "_EXTRA_FILES", **_nullable(_STRINGS)},
            ],
        },
    ]
)


@dataclass(frozen=True, slots=True)
class SimpleStats:
    """Min/max values (BinaryRows) and null counts of a set of columns."""

    min_values: bytes
    max_values: bytes
    null_counts: tuple[int | None, ...] | None

    def to_avro(self) -> dict[str, Any]:
        counts = list(self.null_counts) if self.null_counts is not None else None
        return {"_MIN_VALUES": self.min_values, "_MAX_VALUES": self.max_values, "_NULL_COUNTS": counts}

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> SimpleStats:
        counts = rec.get("_NULL_COUNTS")
        return cls(rec["_MIN_VALUES"], rec["_MAX_VALUES"], tuple(counts) if counts is not None else None)


@dataclass(frozen=True, slots=True)
class DataFileMeta:
    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: tuple[str, ...] = ()
    creation_time_ms: int | None = None
    delete_row_count: int | None = None
    embedded_file_index: bytes | None = None
    file_source: int | None = None
    value_stats_cols: tuple[str, ...] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: tuple[str, ...] | None = None

    def upgrade(self, level: int) -> DataFileMeta:
        return replace(self, level=level)

    def to_avro(self) -> dict[str, Any]:
        created = None
        if self.creation_time_ms is not None:
            created = dt.datetime.fromtimestamp(self.creation_time_ms / 1000, tz=dt.UTC)
        return {
            "_FILE_NAME": self.file_name,
            "_FILE_SIZE": self.file_size,
            "_ROW_COUNT": self.row_count,
            "_MIN_KEY": self.min_key,
            "_MAX_KEY": self.max_key,
            "_KEY_STATS": self.key_stats.to_avro(),
            "_VALUE_STATS": self.value_stats.to_avro(),
            "_MIN_SEQUENCE_NUMBER": self.min_sequence_number,
            "_MAX_SEQUENCE_NUMBER": self.max_sequence_number,
            "_SCHEMA_ID": self.schema_id,
            "_LEVEL": self.level,
            "_EXTRA_FILES": list(self.extra_files),
            "_CREATION_TIME": created,
            "_DELETE_ROW_COUNT": self.delete_row_count,
            "_EMBEDDED_FILE_INDEX": self.embedded_file_index,
            "_FILE_SOURCE": self.file_source,
            "_VALUE_STATS_COLS": list(self.value_stats_cols) if self.value_stats_cols is not None else None,
            "_EXTERNAL_PATH": self.external_path,
            "_FIRST_ROW_ID": self.first_row_id,
            "_WRITE_COLS": list(self.write_cols) if self.write_cols is not None else None,
            "_WRITE_COLS_SEQUENCES": None,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> DataFileMeta:
        created = rec.get("_CREATION_TIME")
        if isinstance(created, dt.datetime):
            if created.tzinfo is None:
                created = created.replace(tzinfo=dt.UTC)
            created = int(created.timestamp() * 1000)
        stats_cols = rec.get("_VALUE_STATS_COLS")
        write_cols = rec.get("_WRITE_COLS")
        return cls(
            file_name=rec["_FILE_NAME"],
            file_size=rec["_FILE_SIZE"],
            row_count=rec["_ROW_COUNT"],
            min_key=rec["_MIN_KEY"],
            max_key=rec["_MAX_KEY"],
            key_stats=SimpleStats.from_avro(rec["_KEY_STATS"]),
            value_stats=SimpleStats.from_avro(rec["_VALUE_STATS"]),
            min_sequence_number=rec["_MIN_SEQUENCE_NUMBER"],
            max_sequence_number=rec["_MAX_SEQUENCE_NUMBER"],
            schema_id=rec["_SCHEMA_ID"],
            level=rec["_LEVEL"],
            extra_files=tuple(rec.get("_EXTRA_FILES") or ()),
            creation_time_ms=created,
            delete_row_count=rec.get("_DELETE_ROW_COUNT"),
            embedded_file_index=rec.get("_EMBEDDED_FILE_INDEX"),
            file_source=rec.get("_FILE_SOURCE"),
            value_stats_cols=tuple(stats_cols) if stats_cols is not None else None,
            external_path=rec.get("_EXTERNAL_PATH"),
            first_row_id=rec.get("_FIRST_ROW_ID"),
            write_cols=tuple(write_cols) if write_cols is not None else None,
        )


FileKey = tuple[bytes, int, int, str, tuple[str, ...], bytes | None, str | None]


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    kind: int
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    @property
    def identifier(self) -> FileKey:
        """What a DELETE must repeat of its ADD to cancel it."""
        f = self.file
        return (self.partition, self.bucket, f.level, f.file_name, f.extra_files, f.embedded_file_index, f.external_path)

    def to_avro(self) -> dict[str, Any]:
        return {
            "_VERSION": 2,
            "_KIND": self.kind,
            "_PARTITION": self.partition,
            "_BUCKET": self.bucket,
            "_TOTAL_BUCKETS": self.total_buckets,
            "_FILE": self.file.to_avro(),
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> ManifestEntry:
        kind = rec["_KIND"]
        if kind not in (ADD, DELETE):
            # any other kind would be neither added nor removed: its file would vanish silently
            raise ValueError(f"unknown entry kind {kind}")
        return cls(kind, rec["_PARTITION"], rec["_BUCKET"], rec["_TOTAL_BUCKETS"], DataFileMeta.from_avro(rec["_FILE"]))


@dataclass(frozen=True, slots=True)
class ManifestFileMeta:
    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    total_buckets: int | None = None
    min_row_id: int | None = None  # Paimon 1.4: row ids the manifest's files cover (row tracking)
    max_row_id: int | None = None

    def to_avro(self) -> dict[str, Any]:
        return {
            "_VERSION": 2,
            "_FILE_NAME": self.file_name,
            "_FILE_SIZE": self.file_size,
            "_NUM_ADDED_FILES": self.num_added_files,
            "_NUM_DELETED_FILES": self.num_deleted_files,
            "_PARTITION_STATS": self.partition_stats.to_avro(),
            "_SCHEMA_ID": self.schema_id,
            "_MIN_BUCKET": self.min_bucket,
            "_MAX_BUCKET": self.max_bucket,
            "_MIN_LEVEL": self.min_level,
            "_MAX_LEVEL": self.max_level,
            "_MIN_ROW_ID": self.min_row_id,
            "_MAX_ROW_ID": self.max_row_id,
            "_TOTAL_BUCKETS": self.total_buckets,
            "_EXTRA_FILES": None,
        }

    @classmethod
    def from_avro(cls, rec: dict[str, Any]) -> ManifestFileMeta:
        return cls(
            file_name=rec["_FILE_NAME"],
            file_size=rec["_FILE_SIZE"],
            num_added_files=rec["_NUM_ADDED_FILES"],
            num_deleted_files=rec["_NUM_DELETED_FILES"],
            partition_stats=SimpleStats.from_avro(rec["_PARTITION_STATS"]),
            schema_id=rec["_SCHEMA_ID"],
            min_bucket=rec.get("_MIN_BUCKET"),
            max_bucket=rec.get("_MAX_BUCKET"),
            min_level=rec.get("_MIN_LEVEL"),
            max_level=rec.get("_MAX_LEVEL"),
            total_buckets=rec.get("_TOTAL_BUCKETS"),
            min_row_id=rec.get("_MIN_ROW_ID"),
            max_row_id=rec.get("_MAX_ROW_ID"),
        )


def _codec(compression: str) -> str:
    return {"zstd": "zstandard", "null": "null", "deflate": "deflate", "snappy": "snappy"}.get(compression, compression)


def _encode(schema: Any, records: Iterable[dict[str, Any]], compression: str) -> bytes:
    buffer = io.BytesIO()
    fastavro.writer(buffer, schema, records, codec=_codec(compression))
    return buffer.getvalue()


def _decode(data: bytes, path: str) -> list[dict[str, Any]]:
    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as exc:  # fastavro raises many types on garbage input
        raise CorruptMetadataError(path, f"unreadable Avro: {exc!r}") from exc
    return [cast(dict[str, Any], r) for r in records if r is not None]


class ManifestStore:
    """Reads and writes one table's manifest files and manifest lists under ``manifest/``."""

    def __init__(self, file_io: FileIO, table_path: str, *, compression: str = "zstd") -> None:
        self.file_io = file_io
        self.manifest_dir = f"{table_path}/manifest"
        self.compression = compression
        self._prefix = uuid.uuid4()
        self._counter = itertools.count()  # next() is atomic: stores are shared across threads
        self._entry_cache: dict[str, list[ManifestEntry]] = {}

    def path(self, name: str) -> str:
        return f"{self.manifest_dir}/{name}"

    def _next_name(self, kind: str) -> str:
        return f"{kind}-{self._prefix}-{next(self._counter)}"

    # -- manifest files -----------------------------------------------------------------------
    def write_entries(self, entries: Sequence[ManifestEntry], *, schema_id: int, partition_stats: SimpleStats) -> ManifestFileMeta:
        name = self._next_name("manifest")
        data = _encode(MANIFEST_ENTRY_SCHEMA, (e.to_avro() for e in entries), self.compression)
        self.file_io.write_bytes(self.path(name), data)
        buckets = [e.bucket for e in entries]
        levels = [e.file.level for e in entries]
        totals = {e.total_buckets for e in entries}
        # Paimon's ManifestFile writer: the row-id span of its entries, null once one has no first row id
        spans = [(f.first_row_id, f.first_row_id + f.row_count - 1) for f in (e.file for e in entries) if f.first_row_id is not None]
        if len(spans) < len(entries):
            spans = []
        return ManifestFileMeta(
            file_name=name,
            file_size=len(data),
            num_added_files=sum(1 for e in entries if e.kind == ADD),
            num_deleted_files=sum(1 for e in entries if e.kind == DELETE),
            partition_stats=partition_stats,
            schema_id=schema_id,
            min_bucket=min(buckets) if buckets else None,
            max_bucket=max(buckets) if buckets else None,
            min_level=min(levels) if levels else None,
            max_level=max(levels) if levels else None,
            total_buckets=totals.pop() if len(totals) == 1 else None,
            min_row_id=min(s[0] for s in spans) if spans else None,
            max_row_id=max(s[1] for s in spans) if spans else None,
        )

    def read_entries(self, name: str) -> list[ManifestEntry]:
        cached = self._entry_cache.get(name)
        if cached is not None:
            return cached
        path = self.path(name)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError as exc:
            raise CorruptMetadataError(path, "manifest file is missing") from exc
        try:
            entries = [ManifestEntry.from_avro(r) for r in _decode(data, path)]
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptMetadataError(path, f"bad manifest entry: {exc!r}") from exc
        if len(self._entry_cache) > 1024:
            self._entry_cache.clear()
        self._entry_cache[name] = entries  # manifests are immutable
        return entries

    # -- manifest lists -----------------------------------------------------------------------
    def write_list(self, metas: Sequence[ManifestFileMeta]) -> tuple[str, int]:
        name = self._next_name("manifest-list")
        data = _encode(MANIFEST_LIST_SCHEMA, (m.to_avro() for m in metas), self.compression)
        self.file_io.write_bytes(self.path(name), data)
        return name, len(data)

    def read_list(self, name: str) -> list[ManifestFileMeta]:
        path = self.path(name)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError as exc:
            raise CorruptMetadataError(path, "manifest list is missing") from exc
        try:
            return [ManifestFileMeta.from_avro(r) for r in _decode(data, path)]
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptMetadataError(path, f"bad manifest list record: {exc!r}") from exc

    def delete(self, name: str) -> None:
        self._entry_cache.pop(name, None)
        self.file_io.delete(self.path(name))

    def forget(self, names: Iterable[str]) -> None:
        """Drop cached entries of manifests deleted elsewhere (``lakestore.meta.confine``)."""
        for name in names:
            self._entry_cache.pop(name, None)


def merge_entries(entries: Iterable[ManifestEntry]) -> dict[FileKey, ManifestEntry]:
    """Apply ADD/DELETE entries in order; returns the live ADD entries by identifier.
    A DELETE whose ADD is not in ``entries`` is kept (it cancels an ADD elsewhere)."""
    live: dict[FileKey, ManifestEntry] = {}
    for entry in entries:
        key = entry.identifier
        if entry.kind == ADD:
            live[key] = entry
        elif key in live and live[key].kind == ADD:
            del live[key]
        else:
            live[key] = entry
    return live
