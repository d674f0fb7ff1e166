"""Data and index files as tools and pipelines see them: decoded partition values, level, rows
and bytes, without manifest entries' binary rows (``FileStore.live_files`` / ``FileStore.delta_files`` /
``FileStore.index_files``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lakestore.format.binary_row import decode_row
from lakestore.format.partition_path import partition_path
from lakestore.io.fileio import FileIO
from lakestore.meta.file_scan import live_entries, read_entries
from lakestore.meta.index_manifest import read_index_manifest
from lakestore.meta.manifest import ADD, ManifestEntry, ManifestStore
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot


@dataclass(frozen=True)
class FileInfo:
    kind: Literal["ADD", "DELETE"]  # in a snapshot's delta; live files are all ADD
    partition: dict[str, Any]  # partition key -> value
    partition_path: str  # "dt=2024-01-01" ("" for an unpartitioned table)
    bucket: int
    level: int
    file_name: str
    rows: int
    bytes: int
    external_path: str | None = None  # ``_EXTERNAL_PATH``: the file lives outside the table directory


@dataclass(frozen=True)
class IndexFileInfo:
    """A live index file: the key hashes (``HASH``) or deletion vectors (``DELETION_VECTORS``) of
    one bucket; ``rows`` counts hashes or data files with vectors."""

    index_type: str
    partition: dict[str, Any]
    partition_path: str
    bucket: int
    file_name: str
    rows: int
    bytes: int


class _Partitions:
    """Decodes serialized partitions once each."""

    def __init__(self, schema: TableSchema, source: str) -> None:
        self.keys = schema.partition_keys
        self.types = schema.types_of(self.keys)
        self.default_name = schema.core_options().partition_default_name
        self.source = source
        self._decoded: dict[bytes, tuple[dict[str, Any], str]] = {}

    def __call__(self, partition: bytes) -> tuple[dict[str, Any], str]:
        if partition not in self._decoded:
            values = decode_row(partition, self.types, source=self.source)
            path = partition_path(self.keys, self.types, values, default_name=self.default_name)
            self._decoded[partition] = (dict(zip(self.keys, values, strict=True)), path)
        return self._decoded[partition]


def _infos(entries: Sequence[ManifestEntry], schema: TableSchema, *, source: str) -> list[FileInfo]:
    partitions = _Partitions(schema, source)
    out = []
    for entry in entries:
        values_by_key, path = partitions(entry.partition)
        out.append(
            FileInfo(
                "ADD" if entry.kind == ADD else "DELETE",
                values_by_key,
                path,
                entry.bucket,
                entry.file.level,
                entry.file.file_name,
                entry.file.row_count,
                entry.file.file_size,
                entry.file.external_path,
            )
        )
    return out


def live_files(store: ManifestStore, schema: TableSchema, snapshot: Snapshot | None) -> list[FileInfo]:
    """The data files a snapshot reads (none for None)."""
    if snapshot is None:
        return []
    return _infos(live_entries(store, snapshot), schema, source=snapshot.base_manifest_list)


def delta_files(store: ManifestStore, schema: TableSchema, snapshot: Snapshot) -> list[FileInfo]:
    """The files a snapshot added and removed (its delta manifests)."""
    return _infos(read_entries(store, store.read_list(snapshot.delta_manifest_list)), schema, source=snapshot.delta_manifest_list)


def index_files(file_io: FileIO, table_path: str, schema: TableSchema, snapshot: Snapshot | None) -> list[IndexFileInfo]:
    """The index files a snapshot holds (none without an index manifest)."""
    if snapshot is None or not snapshot.index_manifest:
        return []
    partitions = _Partitions(schema, snapshot.index_manifest)
    out = []
    for entry in read_index_manifest(file_io, table_path, snapshot.index_manifest):
        values_by_key, path = partitions(entry.partition)
        f = entry.index_file
        out.append(IndexFileInfo(f.index_type, values_by_key, path, entry.bucket, f.file_name, f.row_count, f.file_size))
    return out
