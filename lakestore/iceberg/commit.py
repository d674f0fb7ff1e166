"""Iceberg metadata after each Paimon snapshot, as Paimon 2.0's IcebergCommitCallback writes it.

For snapshot N: ``v<N>.metadata.json`` and ``version-hint.text`` in the metadata directory, a
manifest list and manifests naming the snapshot's data files. When ``v<N-1>.metadata.json``
exists the new metadata continues it (its manifests reused, manifests that lose a file
rewritten with DELETED/EXISTING entries, small manifests compacted); otherwise it is built afresh
from the snapshot's raw-convertible files. Primary-key tables publish their files on the last
level only (all files of a split the reader need not merge when built afresh), as Paimon does.
Iceberg snapshots past the table's snapshot retention, and metadata files past
``metadata.iceberg.previous-versions-max``, are deleted with their manifests.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lakestore.compact.task import interval_partition
from lakestore.errors import SnapshotNotFoundError, UnsupportedTableError
from lakestore.format.binary_row import decode_row
from lakestore.format.types import DataType
from lakestore.iceberg import types as itypes
from lakestore.iceberg.manifests import ADDED, DATA, DELETED, EXISTING, DataFile, Entry, ManifestIO, ManifestMeta, with_status
from lakestore.io.fileio import FileIO
from lakestore.meta.file_scan import read_entries
from lakestore.meta.manifest import ADD, DataFileMeta, ManifestEntry, ManifestStore
from lakestore.meta.paths import TablePaths, join
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot

VERSION_HINT = "version-hint.text"
_PLACEHOLDER = DataType("BIGINT")


def metadata_directory(table_path: str, options: Mapping[str, str]) -> str:
    """Where Paimon keeps a table's Iceberg metadata: ``<table>/metadata`` (table-location), or
    ``<warehouse>/iceberg/<db>/<table>/metadata`` (hadoop-catalog, catalog-location)."""
    storage = options.get("metadata.iceberg.storage", "disabled").strip().lower()
    location = options.get("metadata.iceberg.storage-location")
    location = location.strip().lower() if location else ("table-location" if storage == "table-location" else "catalog-location")
    table_path = table_path.rstrip("/")
    db_path, table_name = table_path.rsplit("/", 1)
    if location == "table-location":
        return join(table_path, "metadata")
    parent, db_dir = db_path.rsplit("/", 1)
    if not db_dir.endswith(".db"):
        raise UnsupportedTableError(
            "metadata.iceberg.storage-location=catalog-location needs a table in a <db>.db warehouse directory; "
            "set metadata.iceberg.storage-location=table-location"
        )
    return join(join(join(parent, "iceberg"), db_dir[: -len(".db")]), f"{table_name}/metadata")


def enabled(options: Mapping[str, str]) -> bool:
    return options.get("metadata.iceberg.storage", "disabled").strip().lower() != "disabled"


@dataclass(frozen=True)
class IcebergSources:
    """What the metadata is generated from: the table's files, schemas, snapshots and tags."""

    file_io: FileIO
    table_path: str
    schema: TableSchema  # the latest schema
    schema_of: Callable[[int], TableSchema]
    manifests: ManifestStore
    snapshot_of: Callable[[int], Snapshot]
    tags: Callable[[], Sequence[tuple[str, int]]]  # (name, snapshot id) of every tag


def metadata_path(directory: str, snapshot_id: int) -> str:
    return join(directory, f"v{snapshot_id}.metadata.json")


class MetadataGenerator:
    def __init__(self, src: IcebergSources) -> None:
        self.src = src
        self.schema = src.schema
        self.options = src.schema.core_options()
        raw = src.schema.options
        self.directory = metadata_directory(src.table_path, raw)
        self.partition_keys = list(self.schema.partition_keys)
        self.partition_types = self.schema.types_of(self.partition_keys)
        self.io = ManifestIO(
            src.file_io,
            self.directory,
            self.partition_keys,
            self.partition_types,
            codec=self.options.get("metadata.iceberg.manifest-compression"),
            uuid=str(uuid.uuid4()),
        )
        self.paths = TablePaths.of(src.table_path, self.schema)
        self._iceberg_schemas: dict[int, dict[str, Any]] = {}
        self._decoded_partitions: dict[bytes, tuple[Any, ...]] = {}

    # -- helpers ----------------------------------------------------------------------------
    def iceberg_schema(self, schema_id: int) -> dict[str, Any]:
        if schema_id not in self._iceberg_schemas:
            self._iceberg_schemas[schema_id] = itypes.iceberg_schema(self.src.schema_of(schema_id))
        return self._iceberg_schemas[schema_id]

    def partition(self, raw: bytes) -> tuple[Any, ...]:
        if raw not in self._decoded_partitions:
            self._decoded_partitions[raw] = decode_row(raw, self.partition_types, source="iceberg") if self.partition_keys else ()
        return self._decoded_partitions[raw]

    def published(self, f: DataFileMeta) -> bool:
        """Paimon's shouldAddFileToIceberg: every append file; a primary-key table's last level."""
        if not self.schema.primary_keys:
            return True
        return f.level == self.options.num_levels - 1

    def data_file(self, entry: ManifestEntry) -> DataFile:
        f = entry.file
        schema = self.src.schema_of(f.schema_id)
        columns = list(f.value_stats_cols) if f.value_stats_cols is not None else schema.field_names
        by_name = {field.name: field for field in schema.fields}
        types = [by_name[c].type if c in by_name and itypes.has_bounds(by_name[c].type) else _PLACEHOLDER for c in columns]
        stats = f.value_stats
        mins = decode_row(stats.min_values, types, source=f.file_name) if columns else ()
        maxs = decode_row(stats.max_values, types, source=f.file_name) if columns else ()
        nulls, lows, highs = [], [], []
        for i, name in enumerate(columns):
            field = by_name.get(name)
            if field is None:
                continue
            if stats.null_counts is not None and i < len(stats.null_counts) and stats.null_counts[i] is not None:
                nulls.append((field.id, int(stats.null_counts[i] or 0)))
            if not itypes.has_bounds(field.type) or mins[i] is None or maxs[i] is None:
                continue
            try:
                lows.append((field.id, itypes.to_bytes(field.type, mins[i])))
                highs.append((field.id, itypes.to_bytes(field.type, maxs[i])))
            except UnsupportedTableError:
                continue
        partition_path = self.paths.partition_path_of(entry.partition)
        path = self.paths.file_path(partition_path, entry.bucket, f)
        fmt = f.file_name.rsplit(".", 1)[-1] if "." in f.file_name else "parquet"
        return DataFile(path, fmt, self.partition(entry.partition), f.row_count, f.file_size, tuple(nulls), tuple(lows), tuple(highs))

    # -- metadata afresh ----------------------------------------------------------------------
    def raw_convertible_entries(self, snapshot: Snapshot) -> list[ManifestEntry]:
        """The files Paimon's snapshot reader marks raw-convertible (its batch split generator):
        every file of an append table; per bucket of a primary-key table, all files when none is
        on level 0 or has delete rows and they sit on one level (any levels with deletion vectors
        or first-row), else each file whose key range overlaps no other and that has no delete
        rows. Level-0 files count here, unlike in batch reads of deletion-vector tables."""
        live = _live(self.src.manifests, snapshot)
        if not self.schema.primary_keys:
            return live
        any_levels = self.schema.reads_skip_level0
        key_types = self.schema.types_of(self.schema.trimmed_primary_keys)
        buckets: dict[tuple[bytes, int], list[ManifestEntry]] = {}
        for entry in live:
            buckets.setdefault((entry.partition, entry.bucket), []).append(entry)
        out: list[ManifestEntry] = []
        for group in buckets.values():
            files = [e.file for e in group]
            clean = all(f.level != 0 and not (f.delete_row_count or 0) for f in files)
            if clean and (any_levels or len({f.level for f in files}) == 1):
                out.extend(group)
                continue
            by_name = {e.file.file_name: e for e in group}
            sections = interval_partition(files, key_types)
            out.extend(by_name[s[0].file_name] for s in sections if len(s) == 1 and not (s[0].delete_row_count or 0))
        return out

    def fresh(self, snapshot: Snapshot) -> dict[str, Any]:
        sid = snapshot.id
        entries = [Entry(ADDED, sid, sid, sid, self.data_file(e)) for e in self.raw_convertible_entries(snapshot)]
        metas = self.io.write_manifest(entries, sid)
        list_path = self.io.write_list(metas)
        added_size = sum(e.file.file_size_in_bytes for e in entries)
        added_rows = sum(e.file.record_count for e in entries)
        summary = _summary(
            "append",
            snapshot,
            added=(len(entries), added_rows, added_size),
            deleted=(0, 0, 0),
            partitions=len({e.file.partition for e in entries}),
            totals=(len(entries), added_rows, added_size),
        )
        schema = self.iceberg_schema(self.schema.id)
        specs = itypes.partition_fields(self.schema)
        return {
            "format-version": 2,
            "table-uuid": str(uuid.uuid4()),
            "location": self.src.table_path,
            "last-sequence-number": sid,
            "last-updated-ms": _now(),
            "last-column-id": itypes.highest_field_id(schema),
            "schemas": [self.iceberg_schema(i) for i in range(self.schema.id + 1)],
            "current-schema-id": self.schema.id,
            "partition-specs": [{"spec-id": 0, "fields": specs}],
            "default-spec-id": 0,
            "last-partition-id": max((f["field-id"] for f in specs), default=itypes.FIRST_PARTITION_FIELD_ID - 1),
            "sort-orders": [{"order-id": 0, "fields": []}],
            "default-sort-order-id": 0,
            "snapshots": [_snapshot(sid, None, summary, list_path, self.schema.id)],
            "current-snapshot-id": sid,
            "properties": {},
            "refs": {},
        }

    # -- metadata continued -------------------------------------------------------------------
    def continued(self, snapshot: Snapshot, base: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        sid = snapshot.id
        base_snapshot = next(s for s in base["snapshots"] if s["snapshot-id"] == base["current-snapshot-id"])
        base_metas = [m for m in self.io.read_list(base_snapshot["manifest-list"]) if m.content == DATA]
        removed: dict[str, tuple[ManifestEntry, DataFile]] = {}
        added: dict[str, tuple[ManifestEntry, DataFile]] = {}
        add_only = True
        for entry in read_entries(self.src.manifests, self.src.manifests.read_list(snapshot.delta_manifest_list)):
            df = self.data_file(entry)
            if entry.kind == ADD:
                if self.published(entry.file):
                    removed.pop(df.file_path, None)
                    added[df.file_path] = (entry, df)
            else:
                add_only = False
                added.pop(df.file_path, None)
                removed[df.file_path] = (entry, df)
        operation = "append"
        metas: list[ManifestMeta] = []
        if add_only:
            metas = list(base_metas)
        else:
            changed = {df.partition for _, df in (*removed.values(), *added.values())}
            for meta in base_metas:
                if not self._may_hold(meta, changed):
                    metas.append(meta)
                    continue
                old = self.io.read_manifest(meta)
                reusable = True
                for e in old:
                    if not e.live:
                        continue
                    if e.file.file_path in added:
                        del added[e.file.file_path]  # a file that changed level only
                    elif e.file.file_path in removed:
                        reusable = False
                if reusable:
                    metas.append(meta)
                    continue
                operation = "replace" if snapshot.commit_kind == "COMPACT" else "overwrite"
                rewritten = [
                    with_status(e, DELETED, sid) if e.file.file_path in removed else with_status(e, EXISTING) for e in old if e.live
                ]
                metas.extend(self.io.write_manifest(rewritten, sid))
        new_entries = [Entry(ADDED, sid, sid, sid, df) for _, df in added.values()]
        metas.extend(self.io.write_manifest(new_entries, sid))
        metas = self._compact(metas, sid)
        list_path = self.io.write_list(metas)

        add_stats = (len(added), sum(df.record_count for _, df in added.values()), sum(df.file_size_in_bytes for _, df in added.values()))
        del_stats = (
            len(removed),
            sum(df.record_count for _, df in removed.values()),
            sum(df.file_size_in_bytes for _, df in removed.values()),
        )
        prev = base_snapshot.get("summary", {})
        totals = tuple(
            max(0, int(prev.get(key, 0)) + a - d)
            for key, a, d in zip(("total-data-files", "total-records", "total-files-size"), add_stats, del_stats, strict=True)
        )
        partitions = len({df.partition for _, df in (*removed.values(), *added.values())})
        summary = _summary(operation, snapshot, added=add_stats, deleted=del_stats, partitions=partitions, totals=totals)  # type: ignore[arg-type]

        schemas = list(base["schemas"])
        current = self.schema.id
        if base["current-schema-id"] != current:
            if current < base["current-schema-id"]:
                raise UnsupportedTableError(f"schema {current} is older than the Iceberg metadata's schema {base['current-schema-id']}")
            schemas.extend(self.iceberg_schema(i) for i in range(base["current-schema-id"] + 1, current + 1))
        snapshots = [*base["snapshots"], _snapshot(sid, sid - 1, summary, list_path, current)]
        expired: list[dict[str, Any]] = []
        for i in range(len(snapshots) - 1):
            expired.append(snapshots[i])
            if not self._should_expire(snapshots[i], sid):
                snapshots = snapshots[i:]
                break
        else:
            snapshots = snapshots[-1:]  # every earlier snapshot expired
            expired.append(snapshots[0])
        ids = {s["snapshot-id"] for s in snapshots}
        refs: dict[str, Any] = {}
        for name, tag_sid in self.src.tags():
            if tag_sid in ids and tag_sid not in {r["snapshot-id"] for r in refs.values()}:
                refs[name] = {"snapshot-id": tag_sid, "type": "tag", "max-ref-age-ms": 2**63 - 1}
        metadata = {
            **base,
            "last-sequence-number": sid,
            "last-updated-ms": _now(),
            "last-column-id": itypes.highest_field_id(self.iceberg_schema(current)),
            "schemas": schemas,
            "current-schema-id": current,
            "snapshots": snapshots,
            "current-snapshot-id": sid,
            "refs": refs,
        }
        return metadata, expired

    def _may_hold(self, meta: ManifestMeta, partitions: set[tuple[Any, ...]]) -> bool:
        if not self.partition_keys or not meta.partitions:
            return True
        for values in partitions:
            fits = True
            for value, summary, dtype in zip(values, meta.partitions, self.partition_types, strict=True):
                if value is None:
                    fits = fits and summary.contains_null
                elif summary.lower_bound is None or summary.upper_bound is None:
                    fits = False
                else:
                    low, high = itypes.from_bytes(dtype, summary.lower_bound), itypes.from_bytes(dtype, summary.upper_bound)
                    fits = fits and low <= value <= high
            if fits:
                return True
        return False

    def _compact(self, metas: list[ManifestMeta], sid: int) -> list[ManifestMeta]:
        target = self.options.manifest_target_size
        small = [m for m in metas if m.manifest_length < target * 2 // 3]
        kept = [m for m in metas if m.manifest_length >= target * 2 // 3]
        if len(small) < self.options.get("metadata.iceberg.compaction.min.file-num"):
            return metas
        if len(small) < self.options.get("metadata.iceberg.compaction.max.file-num") and sum(m.manifest_length for m in small) < target:
            return metas
        entries: list[Entry] = []
        for meta in small:
            for e in self.io.read_manifest(meta):
                if e.file_sequence_number == sid or e.snapshot_id == sid or e.status == EXISTING:
                    entries.append(e)
                elif e.status == ADDED:
                    entries.append(with_status(e, EXISTING))
            if meta.sequence_number == sid:
                self.src.file_io.delete(meta.manifest_path)  # written by this commit, listed nowhere
        return kept + self.io.write_manifest(entries, sid)

    def _should_expire(self, snap: dict[str, Any], current: int) -> bool:
        sid = snap["snapshot-id"]
        if sid > current - self.options.snapshot_num_retained_min:
            return False
        retained_max = self.options.snapshot_num_retained_max
        if retained_max is not None and sid <= current - retained_max:
            return True
        return snap["timestamp-ms"] < _now() - self.options.snapshot_time_retained_ms


def _now() -> int:
    return int(time.time() * 1000)


def _snapshot(sid: int, parent: int | None, summary: dict[str, str], manifest_list: str, schema_id: int) -> dict[str, Any]:
    out: dict[str, Any] = {"sequence-number": sid, "snapshot-id": sid}
    if parent is not None:
        out["parent-snapshot-id"] = parent
    out.update({"timestamp-ms": _now(), "summary": summary, "manifest-list": manifest_list, "schema-id": schema_id})
    return out


def _summary(
    operation: str,
    snapshot: Snapshot,
    *,
    added: tuple[int, int, int],
    deleted: tuple[int, int, int],
    partitions: int,
    totals: tuple[int, int, int],
) -> dict[str, str]:
    out = {
        "operation": operation,
        "added-data-files": str(added[0]),
        "added-records": str(added[1]),
        "added-files-size": str(added[2]),
        "deleted-data-files": str(deleted[0]),
        "deleted-records": str(deleted[1]),
        "removed-files-size": str(deleted[2]),
        "changed-partition-count": str(partitions),
        "total-records": str(totals[1]),
        "total-data-files": str(totals[0]),
        "total-files-size": str(totals[2]),
        "total-delete-files": "0",
        "total-position-deletes": "0",
        "total-equality-deletes": "0",
    }
    out.update({k: v for k, v in (snapshot.properties or {}).items() if v is not None})
    return out


def _live(store: ManifestStore, snapshot: Snapshot) -> list[ManifestEntry]:
    from_scan = read_entries(store, [*store.read_list(snapshot.base_manifest_list), *store.read_list(snapshot.delta_manifest_list)])
    live: dict[tuple[bytes, int, str], ManifestEntry] = {}
    for e in from_scan:
        key = (e.partition, e.bucket, e.file.file_name)
        if e.kind == ADD:
            live[key] = e
        else:
            live.pop(key, None)
    return list(live.values())


def metadata_versions(file_io: FileIO, directory: str) -> list[tuple[int, str]]:
    if not file_io.exists(directory):
        return []
    out = []
    for name in file_io.list_names(directory):
        if name.startswith("v") and name.endswith(".metadata.json"):
            try:
                out.append((int(name[1 : -len(".metadata.json")]), join(directory, name)))
            except ValueError:
                continue
    return sorted(out)


def read_metadata(file_io: FileIO, path: str) -> dict[str, Any]:
    doc = json.loads(file_io.read_bytes(path))
    assert isinstance(doc, dict)
    return doc


def write_iceberg_metadata(src: IcebergSources, snapshot: Snapshot) -> str | None:
    """Write the Iceberg metadata of ``snapshot`` (a no-op when it exists). Returns the path of
    its ``v<N>.metadata.json``, or None when the table has no Iceberg metadata storage or the
    metadata of a later snapshot already exists (it is never replaced by an older one).

    Raises ``UnsupportedTableError`` for columns or partition types Iceberg metadata cannot
    describe (as Paimon does), and what the file system raises."""
    if not enabled(src.schema.options):
        return None
    gen = MetadataGenerator(src)
    file_io = src.file_io
    sid = snapshot.id
    later = [version for version, _ in metadata_versions(file_io, gen.directory) if version > sid]
    if later and _snapshot_exists(src, max(later)):
        return None  # a later snapshot's metadata landed first (concurrent committers): it supersedes this one
    if sid == 1 and file_io.exists(gen.directory):
        file_io.delete_dir(gen.directory)  # a table created again under the same name
    path = metadata_path(gen.directory, sid)
    if file_io.exists(path):
        return path
    base_path = metadata_path(gen.directory, sid - 1)
    expired: list[dict[str, Any]] = []
    if file_io.exists(base_path):
        metadata, expired = gen.continued(snapshot, read_metadata(file_io, base_path))
    else:
        metadata = gen.fresh(snapshot)
    file_io.write_bytes(path, json.dumps(metadata).encode(), overwrite=True)  # no indent=: the C encoder
    later = [version for version, _ in metadata_versions(file_io, gen.directory) if version > sid]
    if later and _snapshot_exists(src, max(later)):
        return None  # a later snapshot's metadata landed meanwhile: the hint and the expiration are its
    file_io.write_bytes(join(gen.directory, VERSION_HINT), str(sid).encode(), overwrite=True)
    if expired:
        _delete_metadata_versions(gen, sid)
        for older, newer in zip(expired, expired[1:], strict=False):
            _expire_list(gen, older["manifest-list"], newer["manifest-list"])
    elif not file_io.exists(base_path):
        _expire_all_before(gen, sid)
    else:
        _delete_metadata_versions(gen, sid)
    return path


def _snapshot_exists(src: IcebergSources, snapshot_id: int) -> bool:
    try:
        src.snapshot_of(snapshot_id)
    except SnapshotNotFoundError:
        return False  # metadata of a dropped table of the same name (hadoop-catalog)
    return True


def _expire_list(gen: MetadataGenerator, to_expire: str, following: str) -> None:
    in_use = {m.manifest_path for m in gen.io.read_list(following)}
    for meta in gen.io.read_list(to_expire):
        if meta.manifest_path not in in_use:
            delete_quietly(gen.src.file_io, meta.manifest_path)
    delete_quietly(gen.src.file_io, gen.io.path(to_expire.rsplit("/", 1)[-1]))


def _expire_all_before(gen: MetadataGenerator, sid: int) -> None:
    """Metadata built afresh: every older metadata version, manifest list and manifest goes."""
    seen_lists: set[str] = set()
    seen_manifests: set[str] = set()
    for version, path in metadata_versions(gen.src.file_io, gen.directory):
        if version >= sid:
            continue
        try:
            old = read_metadata(gen.src.file_io, path)
        except (OSError, ValueError):
            continue
        for snap in old.get("snapshots", []):
            name = snap["manifest-list"].rsplit("/", 1)[-1]
            if name in seen_lists:
                continue
            seen_lists.add(name)
            try:
                metas = gen.io.read_list(name)
            except (OSError, ValueError):
                metas = []
            for meta in metas:
                if meta.file_name not in seen_manifests:
                    seen_manifests.add(meta.file_name)
                    delete_quietly(gen.src.file_io, meta.manifest_path)
            delete_quietly(gen.src.file_io, gen.io.path(name))
    _delete_metadata_versions(gen, sid)


def _delete_metadata_versions(gen: MetadataGenerator, sid: int) -> None:
    if not gen.options.get("metadata.iceberg.delete-after-commit.enabled"):
        return
    earliest = sid - gen.options.get("metadata.iceberg.previous-versions-max")
    if earliest <= 0:
        return
    for version, path in metadata_versions(gen.src.file_io, gen.directory):
        if version < earliest:
            delete_quietly(gen.src.file_io, path)


def delete_quietly(file_io: FileIO, path: str) -> None:
    with contextlib.suppress(OSError):
        file_io.delete(path)
