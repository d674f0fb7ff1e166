"""System tables of a snapshot's files: ``files``, ``manifests``, ``partitions``, ``buckets`` and
``table_indexes``, with Paimon 2.0.0's columns. Each reads the latest snapshot or the one a
``TimeTravel`` names, and every level of it (as Paimon's, which never skip level 0)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from lakestore.format.binary_row import decode_row
from lakestore.format.types import DataType
from lakestore.meta.file_scan import data_manifests, live_entries, live_of, read_entries
from lakestore.meta.index_manifest import read_index_manifest
from lakestore.meta.manifest import DataFileMeta, ManifestEntry, SimpleStats
from lakestore.meta.paths import TablePaths
from lakestore.meta.schema import TableSchema
from lakestore.system.source import LATEST, RowPrinter, TableState, TimeTravel, cast_string, object_string, table_of

_TS = pa.timestamp("ms")
_STRING = pa.string()

FILES = pa.schema(
    [
        pa.field("partition", _STRING),
        pa.field("bucket", pa.int32(), nullable=False),
        pa.field("file_path", _STRING, nullable=False),
        pa.field("file_format", _STRING, nullable=False),
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("level", pa.int32(), nullable=False),
        pa.field("record_count", pa.int64(), nullable=False),
        pa.field("file_size_in_bytes", pa.int64(), nullable=False),
        pa.field("min_key", _STRING),
        pa.field("max_key", _STRING),
        pa.field("null_value_counts", _STRING, nullable=False),
        pa.field("min_value_stats", _STRING, nullable=False),
        pa.field("max_value_stats", _STRING, nullable=False),
        pa.field("min_sequence_number", pa.int64()),
        pa.field("max_sequence_number", pa.int64()),
        pa.field("creation_time", _TS),
        pa.field("deleteRowCount", pa.int64()),
        pa.field("file_source", _STRING),
        pa.field("first_row_id", pa.int64()),
        pa.field("write_cols", pa.list_(pa.field("item", _STRING))),
    ]
)
MANIFESTS = pa.schema(
    [
        pa.field("file_name", _STRING, nullable=False),
        pa.field("file_size", pa.int64(), nullable=False),
        pa.field("num_added_files", pa.int64(), nullable=False),
        pa.field("num_deleted_files", pa.int64(), nullable=False),
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("min_partition_stats", _STRING),
        pa.field("max_partition_stats", _STRING),
        pa.field("min_row_id", pa.int64()),
        pa.field("max_row_id", pa.int64()),
    ]
)
PARTITIONS = pa.schema(
    [
        pa.field("partition", _STRING),
        pa.field("record_count", pa.int64(), nullable=False),
        pa.field("file_size_in_bytes", pa.int64(), nullable=False),
        pa.field("file_count", pa.int64(), nullable=False),
        pa.field("last_update_time", _TS),
        pa.field("created_at", _TS),
        pa.field("created_by", _STRING),
        pa.field("updated_by", _STRING),
        pa.field("options", _STRING),
        pa.field("total_buckets", pa.int32(), nullable=False),
        pa.field("done", pa.bool_(), nullable=False),
        pa.field("deleted_record_count", pa.int64()),
    ]
)
BUCKETS = pa.schema(
    [
        pa.field("partition", _STRING),
        pa.field("bucket", pa.int32(), nullable=False),
        pa.field("record_count", pa.int64(), nullable=False),
        pa.field("file_size_in_bytes", pa.int64(), nullable=False),
        pa.field("file_count", pa.int64(), nullable=False),
        pa.field("last_update_time", _TS),
    ]
)
_DV_RANGE = pa.struct(
    [
        pa.field("f0", _STRING, nullable=False),
        pa.field("f1", pa.int32(), nullable=False),
        pa.field("f2", pa.int32(), nullable=False),
        pa.field("_CARDINALITY", pa.int64()),
    ]
)
TABLE_INDEXES = pa.schema(
    [
        pa.field("partition", _STRING),
        pa.field("bucket", pa.int32(), nullable=False),
        pa.field("index_type", _STRING, nullable=False),
        pa.field("file_name", _STRING, nullable=False),
        pa.field("file_size", pa.int64(), nullable=False),
        pa.field("row_count", pa.int64(), nullable=False),
        pa.field("dv_ranges", pa.list_(pa.field("item", _DV_RANGE))),
        pa.field("row_range_start", pa.int64()),
        pa.field("row_range_end", pa.int64()),
        pa.field("index_field_id", pa.int32()),
        pa.field("index_field_name", _STRING),
    ]
)
# Paimon's FileKeyRangesTable: the files table's placement and key columns.
FILE_KEY_RANGES = pa.schema(
    [
        FILES.field(name)
        for name in (
            "partition",
            "bucket",
            "file_path",
            "file_format",
            "schema_id",
            "level",
            "record_count",
            "file_size_in_bytes",
            "min_key",
            "max_key",
            "first_row_id",
        )
    ]
)
# Paimon's FileSource: how a data file came to be.
_FILE_SOURCES = {0: "APPEND", 1: "COMPACT"}
# Extensions Paimon's formatIdentifier skips (HadoopCompressionType), as in ``data.zst.parquet``.
_COMPRESSION_EXTENSIONS = {"gz", "bz2", "deflate", "lz4", "lzo", "snappy", "zst", "zstd", "br"}


def _partitions(state: TableState) -> RowPrinter:
    return RowPrinter(state.store.schema.types_of(state.store.schema.partition_keys), source=state.store.path)


def _live(state: TableState, travel: TimeTravel) -> list[ManifestEntry]:
    return live_entries(state.store.manifest_store, state.resolve(travel))


_NEVER = -(2**63)


def _live_and_updated(
    state: TableState, travel: TimeTravel, key: Callable[[ManifestEntry], Any]
) -> tuple[list[ManifestEntry], dict[Any, int]]:
    """The live entries, and per ``key`` the newest creation time of any entry in the snapshot's
    manifests, DELETE entries included: Paimon's ``PartitionEntry`` / ``BucketEntry`` merge every
    entry and keep the largest ``lastFileCreationTime``, so a file compacted away still counts
    until its entries leave the manifests."""
    store, snapshot = state.store.manifest_store, state.resolve(travel)
    if snapshot is None:
        return [], {}
    entries = read_entries(store, data_manifests(store, snapshot))
    updated: dict[Any, int] = {}
    for e in entries:
        created = e.file.creation_time_ms if e.file.creation_time_ms is not None else _NEVER
        k = key(e)
        updated[k] = max(updated.get(k, _NEVER), created)
    return live_of(store, snapshot, entries), updated


def file_format(file_name: str) -> str:
    """Paimon's ``DataFilePathFactory.formatIdentifier``: the extension, past a compression one."""
    parts = file_name.rsplit(".", 2)
    if len(parts) == 3 and parts[2] in _COMPRESSION_EXTENSIONS:
        return parts[1]
    return parts[-1]


class _Stats:
    """Files' value statistics printed as Paimon's FilesTable prints them: maps of the table's
    current columns by name (Java's TreeMap), a file's columns matched by field id."""

    def __init__(self, state: TableState) -> None:
        self.state = state
        self.fields = list(state.store.schema.fields)
        self.order = sorted(range(len(self.fields)), key=lambda i: self.fields[i].name)
        self._schemas: dict[int, TableSchema] = {}

    def schema(self, schema_id: int) -> TableSchema:
        if schema_id not in self._schemas:
            store = self.state.store
            self._schemas[schema_id] = store.schema if schema_id == store.schema.id else store.schema_manager.get(schema_id)
        return self._schemas[schema_id]

    def key(self, f: DataFileMeta, key: bytes) -> str | None:
        schema = self.schema(f.schema_id)
        names = list(schema.trimmed_primary_keys)
        if not names or not key:
            return None
        types = schema.types_of(names)
        values = decode_row(key, types, source=f.file_name)
        return "[" + ", ".join(object_string(v, t) for v, t in zip(values, types, strict=True)) + "]"

    def print(self, f: DataFileMeta) -> tuple[str, str, str]:
        schema = self.schema(f.schema_id)
        columns = f.value_stats_cols if f.value_stats_cols is not None else tuple(f.write_cols or schema.field_names)
        stats: SimpleStats = f.value_stats
        by_id = {field.id: field for field in schema.fields}
        position = {name: i for i, name in enumerate(columns)}
        types: list[DataType] = [schema.field(name).type for name in columns]
        lows = decode_row(stats.min_values, types, source=f.file_name) if columns else ()
        highs = decode_row(stats.max_values, types, source=f.file_name) if columns else ()
        counts, mins, maxs = [], [], []
        for i in self.order:
            current = self.fields[i]
            old = by_id.get(current.id)
            at = position.get(old.name) if old is not None else None
            if at is None:
                # a column the file's schema lacks is all null; one it has without statistics: unknown
                count: Any = f.row_count if old is None and columns else None
                low: Any = None
                high: Any = None
            else:
                count = stats.null_counts[at] if stats.null_counts is not None and at < len(stats.null_counts) else None
                low, high = lows[at], highs[at]
            counts.append(f"{current.name}={'null' if count is None else count}")
            mins.append(f"{current.name}={object_string(low, types[at] if at is not None else current.type)}")
            maxs.append(f"{current.name}={object_string(high, types[at] if at is not None else current.type)}")
        return "{" + ", ".join(counts) + "}", "{" + ", ".join(mins) + "}", "{" + ", ".join(maxs) + "}"


def files(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """Every data file of the snapshot, one row each (ordered by partition, bucket, level, name)."""
    entries = sorted(_live(state, travel), key=lambda e: (e.partition, e.bucket, e.file.level, e.file.file_name))
    partitions = _partitions(state)
    paths = TablePaths.of(state.store.path, state.store.schema)
    stats = _Stats(state)
    printed = [stats.print(e.file) for e in entries]
    return table_of(
        FILES,
        {
            "partition": [partitions.braces(e.partition) for e in entries],
            "bucket": [e.bucket for e in entries],
            "file_path": [paths.entry_path(e) for e in entries],
            "file_format": [file_format(e.file.file_name) for e in entries],
            "schema_id": [e.file.schema_id for e in entries],
            "level": [e.file.level for e in entries],
            "record_count": [e.file.row_count for e in entries],
            "file_size_in_bytes": [e.file.file_size for e in entries],
            "min_key": [stats.key(e.file, e.file.min_key) for e in entries],
            "max_key": [stats.key(e.file, e.file.max_key) for e in entries],
            "null_value_counts": [p[0] for p in printed],
            "min_value_stats": [p[1] for p in printed],
            "max_value_stats": [p[2] for p in printed],
            "min_sequence_number": [e.file.min_sequence_number for e in entries],
            "max_sequence_number": [e.file.max_sequence_number for e in entries],
            "creation_time": [e.file.creation_time_ms for e in entries],  # stored as local time
            "deleteRowCount": [e.file.delete_row_count for e in entries],
            "file_source": [_FILE_SOURCES.get(e.file.file_source) if e.file.file_source is not None else None for e in entries],
            "first_row_id": [e.file.first_row_id for e in entries],
            "write_cols": [list(e.file.write_cols) if e.file.write_cols is not None else None for e in entries],
        },
    )


def file_key_ranges(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """``files`` without the statistics: where each file is and the key range it holds."""
    return files(state, travel).select(FILE_KEY_RANGES.names)


def manifests(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """The snapshot's manifests (base, delta, then changelog, as Paimon's ``readAllManifests``),
    with their partition ranges."""
    snapshot = state.resolve(travel)
    metas = data_manifests(state.store.manifest_store, snapshot) if snapshot is not None else []
    if snapshot is not None and snapshot.changelog_manifest_list:
        metas += state.store.manifest_store.read_list(snapshot.changelog_manifest_list)
    partitions = _partitions(state)
    return table_of(
        MANIFESTS,
        {
            "file_name": [m.file_name for m in metas],
            "file_size": [m.file_size for m in metas],
            "num_added_files": [m.num_added_files for m in metas],
            "num_deleted_files": [m.num_deleted_files for m in metas],
            "schema_id": [m.schema_id for m in metas],
            "min_partition_stats": [partitions.braces(m.partition_stats.min_values) for m in metas],
            "max_partition_stats": [partitions.braces(m.partition_stats.max_values) for m in metas],
            "min_row_id": [m.min_row_id for m in metas],
            "max_row_id": [m.max_row_id for m in metas],
        },
    )


def _partition_name(state: TableState, values: Sequence[Any]) -> str:
    """``k=v/k2=v2`` with Paimon's default partition name for nulls ("" when unpartitioned)."""
    keys = state.store.schema.partition_keys
    types = state.store.schema.types_of(keys)
    default = state.store.schema.core_options().partition_default_name
    return "/".join(f"{k}={default if v is None else cast_string(v, t)}" for k, t, v in zip(keys, types, values, strict=True))


def _deleted_rows(state: TableState, travel: TimeTravel) -> dict[bytes, int | None]:
    """Deleted rows per partition by the snapshot's deletion vectors (None: a vector without a count)."""
    snapshot = state.resolve(travel)
    out: dict[bytes, int | None] = {}
    if snapshot is None or not snapshot.index_manifest:
        return out
    for entry in read_index_manifest(state.store.file_io, state.store.path, snapshot.index_manifest):
        ranges = entry.index_file.dv_ranges
        if entry.index_file.index_type != "DELETION_VECTORS" or not ranges:
            continue
        if entry.partition in out and out[entry.partition] is None:
            continue
        counts = [r.cardinality for r in ranges]
        known = out.get(entry.partition, 0)
        out[entry.partition] = None if None in counts or known is None else known + sum(c for c in counts if c is not None)
    return out


def partitions(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """One row per partition of the snapshot's files: rows, bytes, files, the newest file's
    creation time, buckets; ordered by the partition's name."""
    entries, updated = _live_and_updated(state, travel, lambda e: e.partition)
    printer = _partitions(state)
    groups: dict[bytes, list[int]] = {}
    for e in entries:
        group = groups.setdefault(e.partition, [0, 0, 0, updated[e.partition], e.total_buckets])
        group[0] += e.file.row_count
        group[1] += e.file.file_size
        group[2] += 1
        group[4] = e.total_buckets
    deleted = _deleted_rows(state, travel) if state.store.schema.core_options().deletion_vectors else {}
    rows = sorted(((_partition_name(state, printer.values(p)), p, g) for p, g in groups.items()), key=lambda r: r[0])
    return table_of(
        PARTITIONS,
        {
            "partition": [name for name, _, _ in rows],
            "record_count": [g[0] for _, _, g in rows],
            "file_size_in_bytes": [g[1] for _, _, g in rows],
            "file_count": [g[2] for _, _, g in rows],
            "last_update_time": [g[3] if g[3] != _NEVER else None for _, _, g in rows],
            "created_at": [None] * len(rows),
            "created_by": [None] * len(rows),
            "updated_by": [None] * len(rows),
            "options": [None] * len(rows),
            "total_buckets": [g[4] for _, _, g in rows],
            "done": [False] * len(rows),
            "deleted_record_count": [deleted.get(p, 0) for _, p, _ in rows],
        },
    )


def buckets(state: TableState) -> pa.Table:
    """One row per (partition, bucket) of the latest snapshot's files, ordered by both (Paimon's
    BucketsTable reads the latest snapshot whatever the scan options say)."""
    printer = _partitions(state)
    groups: dict[tuple[bytes, int], list[int]] = {}
    entries, updated = _live_and_updated(state, LATEST, lambda e: (e.partition, e.bucket))
    for e in entries:
        group = groups.setdefault((e.partition, e.bucket), [0, 0, 0, updated[(e.partition, e.bucket)]])
        group[0] += e.file.row_count
        group[1] += e.file.file_size
        group[2] += 1
    rows = sorted(((printer.braces(p) or "", b, g) for (p, b), g in groups.items()), key=lambda r: (r[0], r[1]))
    return table_of(
        BUCKETS,
        {
            "partition": [p for p, _, _ in rows],
            "bucket": [b for _, b, _ in rows],
            "record_count": [g[0] for _, _, g in rows],
            "file_size_in_bytes": [g[1] for _, _, g in rows],
            "file_count": [g[2] for _, _, g in rows],
            "last_update_time": [g[3] if g[3] != _NEVER else None for _, _, g in rows],
        },
    )


def table_indexes(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """The snapshot's index files (dynamic-bucket key hashes, deletion vectors, global indexes)."""
    snapshot = state.resolve(travel)
    store = state.store
    entries = read_index_manifest(store.file_io, store.path, snapshot.index_manifest) if snapshot and snapshot.index_manifest else []
    printer = _partitions(state)
    names = {f.id: f.name for f in state.store.schema.fields}

    def field_names(e: Any) -> str | None:
        meta = e.index_file.global_index
        if meta is None:
            return None
        ids = [meta.index_field_id, *(meta.extra_field_ids or ())]
        return ",".join(names[i] for i in ids) if all(i in names for i in ids) else None

    def ranges(e: Any) -> list[dict[str, Any]] | None:
        if e.index_file.dv_ranges is None:
            return None
        return [{"f0": r.data_file, "f1": r.offset, "f2": r.length, "_CARDINALITY": r.cardinality} for r in e.index_file.dv_ranges]

    return table_of(
        TABLE_INDEXES,
        {
            "partition": [printer.braces(e.partition) for e in entries],
            "bucket": [e.bucket for e in entries],
            "index_type": [e.index_file.index_type for e in entries],
            "file_name": [e.index_file.file_name for e in entries],
            "file_size": [e.index_file.file_size for e in entries],
            "row_count": [e.index_file.row_count for e in entries],
            "dv_ranges": [ranges(e) for e in entries],
            "row_range_start": [e.index_file.global_index.row_range_start if e.index_file.global_index else None for e in entries],
            "row_range_end": [e.index_file.global_index.row_range_end if e.index_file.global_index else None for e in entries],
            "index_field_id": [e.index_file.global_index.index_field_id if e.index_file.global_index else None for e in entries],
            "index_field_name": [field_names(e) for e in entries],
        },
    )
