"""Data files as tools and pipelines see them: decoded partition values, level, rows and bytes,
without manifest entries' binary rows (``Table.live_files`` / ``Table.delta_files``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lakestore.format.binary_row import decode_row
from lakestore.format.partition_path import partition_path
from lakestore.meta.file_scan import live_entries, read_entries
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


def _infos(entries: Sequence[ManifestEntry], schema: TableSchema, *, source: str) -> list[FileInfo]:
    keys = schema.partition_keys
    types = schema.types_of(keys)
    default_name = schema.core_options().partition_default_name
    decoded: dict[bytes, tuple[dict[str, Any], str]] = {}
    out = []
    for entry in entries:
        if entry.partition not in decoded:
            values = decode_row(entry.partition, types, source=source)
            path = partition_path(keys, types, values, default_name=default_name)
            decoded[entry.partition] = (dict(zip(keys, values, strict=True)), path)
        values_by_key, path = decoded[entry.partition]
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
