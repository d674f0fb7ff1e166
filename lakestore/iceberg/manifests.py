"""Iceberg manifests and manifest lists (Avro, format version 2) as Paimon 2.0 writes them: the
record and field names and field ids of Paimon's IcebergManifestEntry/IcebergManifestFileMeta,
one manifest per write (``<uuid>-m<N>.avro``), one list per snapshot (``snap-<N>-<uuid>.avro``)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import fastavro

from lakestore.format.types import DataType
from lakestore.iceberg import types as itypes
from lakestore.io.fileio import FileIO
from lakestore.meta.paths import join

EXISTING, ADDED, DELETED = 0, 1, 2  # manifest entry status
DATA, DELETES = 0, 1  # manifest content


@dataclass(frozen=True, slots=True)
class DataFile:
    """An Iceberg ``data_file``: a Paimon data file with its partition and column statistics."""

    file_path: str
    file_format: str
    partition: tuple[Any, ...]  # decoded partition values, in partition-key order
    record_count: int
    file_size_in_bytes: int
    null_value_counts: tuple[tuple[int, int], ...] = ()
    lower_bounds: tuple[tuple[int, bytes], ...] = ()
    upper_bounds: tuple[tuple[int, bytes], ...] = ()
    content: int = 0


@dataclass(frozen=True, slots=True)
class Entry:
    status: int
    snapshot_id: int
    sequence_number: int
    file_sequence_number: int
    file: DataFile

    @property
    def live(self) -> bool:
        return self.status in (ADDED, EXISTING)


@dataclass(frozen=True, slots=True)
class PartitionSummary:
    contains_null: bool
    contains_nan: bool
    lower_bound: bytes | None
    upper_bound: bytes | None


@dataclass(frozen=True, slots=True)
class ManifestMeta:
    """An entry of a manifest list."""

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: int
    sequence_number: int
    min_sequence_number: int
    added_snapshot_id: int
    added_files_count: int
    existing_files_count: int
    deleted_files_count: int
    added_rows_count: int
    existing_rows_count: int
    deleted_rows_count: int
    partitions: tuple[PartitionSummary, ...]

    @property
    def file_name(self) -> str:
        return self.manifest_path.rsplit("/", 1)[-1]

    @property
    def live_files(self) -> int:
        return self.added_files_count + self.existing_files_count - self.deleted_files_count

    @property
    def live_rows(self) -> int:
        return self.added_rows_count + self.existing_rows_count - self.deleted_rows_count


def _opt(field_id: int, name: str, avro_type: Any) -> dict[str, Any]:
    return {"field-id": field_id, "name": name, "type": ["null", avro_type], "default": None}


def _int_map(name: str, key_id: int, value_id: int, value_type: str) -> dict[str, Any]:
    return {
        "logicalType": "map",
        "type": "array",
        "items": {
            "type": "record",
            "name": name,
            "fields": [{"field-id": key_id, "name": "key", "type": "int"}, {"field-id": value_id, "name": "value", "type": value_type}],
        },
    }


def entry_schema(partition_names: Sequence[str], partition_types: Sequence[DataType]) -> dict[str, Any]:
    partition_record = {
        "type": "record",
        "name": "r102",
        "fields": [
            _opt(itypes.FIRST_PARTITION_FIELD_ID + i, name, itypes.partition_avro_type(t))
            for i, (name, t) in enumerate(zip(partition_names, partition_types, strict=True))
        ],
    }
    data_file = {
        "type": "record",
        "name": "r2",
        "fields": [
            {"field-id": 134, "name": "content", "type": "int"},
            {"field-id": 100, "name": "file_path", "type": "string"},
            {"field-id": 101, "name": "file_format", "type": "string"},
            {"field-id": 102, "name": "partition", "type": partition_record},
            {"field-id": 103, "name": "record_count", "type": "long"},
            {"field-id": 104, "name": "file_size_in_bytes", "type": "long"},
            _opt(110, "null_value_counts", _int_map("k121_v122", 121, 122, "long")),
            _opt(125, "lower_bounds", _int_map("k126_v127", 126, 127, "bytes")),
            _opt(128, "upper_bounds", _int_map("k129_v130", 129, 130, "bytes")),
            _opt(143, "referenced_data_file", "string"),
            _opt(144, "content_offset", "long"),
            _opt(145, "content_size_in_bytes", "long"),
        ],
    }
    return {
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            {"field-id": 0, "name": "status", "type": "int"},
            _opt(1, "snapshot_id", "long"),
            _opt(3, "sequence_number", "long"),
            _opt(4, "file_sequence_number", "long"),
            {"field-id": 2, "name": "data_file", "type": data_file},
        ],
    }


MANIFEST_LIST_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "manifest_file",
    "fields": [
        {"field-id": 500, "name": "manifest_path", "type": "string"},
        {"field-id": 501, "name": "manifest_length", "type": "long"},
        {"field-id": 502, "name": "partition_spec_id", "type": "int"},
        {"field-id": 517, "name": "content", "type": "int"},
        {"field-id": 515, "name": "sequence_number", "type": "long"},
        {"field-id": 516, "name": "min_sequence_number", "type": "long"},
        _opt(503, "added_snapshot_id", "long"),
        {"field-id": 504, "name": "added_files_count", "type": "int"},
        {"field-id": 505, "name": "existing_files_count", "type": "int"},
        {"field-id": 506, "name": "deleted_files_count", "type": "int"},
        {"field-id": 512, "name": "added_rows_count", "type": "long"},
        {"field-id": 513, "name": "existing_rows_count", "type": "long"},
        {"field-id": 514, "name": "deleted_rows_count", "type": "long"},
        _opt(
            507,
            "partitions",
            {
                "type": "array",
                "element-id": 508,
                "items": {
                    "type": "record",
                    "name": "r508",
                    "fields": [
                        {"field-id": 509, "name": "contains_null", "type": "boolean"},
                        _opt(518, "contains_nan", "boolean"),
                        _opt(510, "lower_bound", "bytes"),
                        _opt(511, "upper_bound", "bytes"),
                    ],
                },
            },
        ),
    ],
}


def _write_avro(file_io: FileIO, path: str, schema: dict[str, Any], records: list[dict[str, Any]], codec: str) -> int:
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), records, codec=codec)
    data = buffer.getvalue()
    file_io.write_bytes(path, data, overwrite=False)
    return len(data)


def _read_avro(file_io: FileIO, path: str) -> list[dict[str, Any]]:
    return list(fastavro.reader(io.BytesIO(file_io.read_bytes(path))))  # type: ignore[arg-type]


class ManifestIO:
    """Reads and writes one table's Iceberg manifests and manifest lists in its metadata directory."""

    def __init__(
        self,
        file_io: FileIO,
        metadata_dir: str,
        partition_names: Sequence[str],
        partition_types: Sequence[DataType],
        *,
        codec: str,
        uuid: str,
    ) -> None:
        self.file_io = file_io
        self.metadata_dir = metadata_dir
        self.partition_names = list(partition_names)
        self.partition_types = list(partition_types)
        self.codec = codec
        self.uuid = uuid
        self._schema = entry_schema(partition_names, partition_types)
        self._manifests = 0
        self._lists = 0

    def path(self, name: str) -> str:
        return join(self.metadata_dir, name)

    # -- manifests --------------------------------------------------------------------------
    def write_manifest(self, entries: Sequence[Entry], sequence_number: int, content: int = DATA) -> list[ManifestMeta]:
        if not entries:
            return []
        self._manifests += 1
        path = self.path(f"{self.uuid}-m{self._manifests}.avro")
        records = [self._entry_record(e) for e in entries]
        length = _write_avro(self.file_io, path, self._schema, records, self.codec)
        counts = {status: [0, 0] for status in (EXISTING, ADDED, DELETED)}
        for e in entries:
            counts[e.status][0] += 1
            counts[e.status][1] += e.file.record_count
        return [
            ManifestMeta(
                path,
                length,
                0,
                content,
                sequence_number,
                min(e.sequence_number for e in entries),
                sequence_number,
                counts[ADDED][0],
                counts[EXISTING][0],
                counts[DELETED][0],
                counts[ADDED][1],
                counts[EXISTING][1],
                counts[DELETED][1],
                self._summaries(entries),
            )
        ]

    def _summaries(self, entries: Sequence[Entry]) -> tuple[PartitionSummary, ...]:
        out = []
        for i, dtype in enumerate(self.partition_types):
            values = [e.file.partition[i] for e in entries]
            present = [v for v in values if v is not None]
            nan = dtype.root in ("FLOAT", "DOUBLE") and any(v != v for v in present)
            ordered = [v for v in present if v == v]
            low = itypes.to_bytes(dtype, min(ordered)) if ordered else None
            high = itypes.to_bytes(dtype, max(ordered)) if ordered else None
            out.append(PartitionSummary(len(present) < len(values), nan, low, high))
        return tuple(out)

    def _entry_record(self, e: Entry) -> dict[str, Any]:
        f = e.file
        partition = {
            name: itypes.partition_avro_value(t, v)
            for name, t, v in zip(self.partition_names, self.partition_types, f.partition, strict=True)
        }
        return {
            "status": e.status,
            "snapshot_id": e.snapshot_id,
            "sequence_number": e.sequence_number,
            "file_sequence_number": e.file_sequence_number,
            "data_file": {
                "content": f.content,
                "file_path": f.file_path,
                "file_format": f.file_format,
                "partition": partition,
                "record_count": f.record_count,
                "file_size_in_bytes": f.file_size_in_bytes,
                "null_value_counts": [{"key": k, "value": v} for k, v in f.null_value_counts],
                "lower_bounds": [{"key": k, "value": v} for k, v in f.lower_bounds],
                "upper_bounds": [{"key": k, "value": v} for k, v in f.upper_bounds],
                "referenced_data_file": None,
                "content_offset": None,
                "content_size_in_bytes": None,
            },
        }

    def read_manifest(self, meta: ManifestMeta) -> list[Entry]:
        out = []
        for rec in _read_avro(self.file_io, self.path(meta.file_name)):
            f = rec["data_file"]
            partition = f["partition"] or {}
            values = []
            for name, t in zip(self.partition_names, self.partition_types, strict=True):
                v = partition.get(name)
                values.append(itypes.from_bytes(t, itypes.to_bytes(t, v)) if t.root == "DATE" and v is not None else v)
            data_file = DataFile(
                f["file_path"],
                f["file_format"],
                tuple(values),
                f["record_count"],
                f["file_size_in_bytes"],
                tuple((m["key"], m["value"]) for m in f.get("null_value_counts") or ()),
                tuple((m["key"], m["value"]) for m in f.get("lower_bounds") or ()),
                tuple((m["key"], m["value"]) for m in f.get("upper_bounds") or ()),
                f.get("content", 0),
            )
            # Iceberg inherits null sequence numbers of ADDED entries from the manifest
            seq = rec["sequence_number"] if rec["sequence_number"] is not None else meta.sequence_number
            file_seq = rec["file_sequence_number"] if rec["file_sequence_number"] is not None else seq
            snap = rec["snapshot_id"] if rec["snapshot_id"] is not None else meta.added_snapshot_id
            out.append(Entry(rec["status"], snap, seq, file_seq, data_file))
        return out

    # -- manifest lists ---------------------------------------------------------------------
    def write_list(self, metas: Sequence[ManifestMeta]) -> str:
        self._lists += 1
        path = self.path(f"snap-{self._lists}-{self.uuid}.avro")
        records = [
            {
                "manifest_path": m.manifest_path,
                "manifest_length": m.manifest_length,
                "partition_spec_id": m.partition_spec_id,
                "content": m.content,
                "sequence_number": m.sequence_number,
                "min_sequence_number": m.min_sequence_number,
                "added_snapshot_id": m.added_snapshot_id,
                "added_files_count": m.added_files_count,
                "existing_files_count": m.existing_files_count,
                "deleted_files_count": m.deleted_files_count,
                "added_rows_count": m.added_rows_count,
                "existing_rows_count": m.existing_rows_count,
                "deleted_rows_count": m.deleted_rows_count,
                "partitions": [
                    {
                        "contains_null": p.contains_null,
                        "contains_nan": p.contains_nan,
                        "lower_bound": p.lower_bound,
                        "upper_bound": p.upper_bound,
                    }
                    for p in m.partitions
                ],
            }
            for m in metas
        ]
        _write_avro(self.file_io, path, MANIFEST_LIST_SCHEMA, records, self.codec)
        return path

    def read_list(self, path: str) -> list[ManifestMeta]:
        out = []
        for r in _read_avro(self.file_io, self.path(path.rsplit("/", 1)[-1])):
            partitions = tuple(
                PartitionSummary(p["contains_null"], bool(p.get("contains_nan")), p.get("lower_bound"), p.get("upper_bound"))
                for p in r.get("partitions") or ()
            )
            out.append(
                ManifestMeta(
                    r["manifest_path"],
                    r["manifest_length"],
                    r["partition_spec_id"],
                    r.get("content", DATA),
                    r["sequence_number"],
                    r["min_sequence_number"],
                    r["added_snapshot_id"],
                    r["added_files_count"],
                    r["existing_files_count"],
                    r["deleted_files_count"],
                    r["added_rows_count"],
                    r["existing_rows_count"],
                    r["deleted_rows_count"],
                    partitions,
                )
            )
        return out


def with_status(entry: Entry, status: int, snapshot_id: int | None = None) -> Entry:
    return replace(entry, status=status, snapshot_id=entry.snapshot_id if snapshot_id is None else snapshot_id)
