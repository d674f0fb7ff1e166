"""Reads over time: the changes committed between two snapshots (``incremental-between``) and a
streaming scan that starts from a full snapshot (or latest, a snapshot id, a timestamp, or a
consumer's stored position) and then returns each new snapshot's changes.

Changes come from the changelog files where the table's ``changelog-producer`` writes them,
otherwise from the data files each APPEND snapshot added (its delta), as Paimon reads them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

from lakestore.errors import SnapshotNotFoundError
from lakestore.format.arrow_ops import as_numpy, from_pylist, indices
from lakestore.format.binary_row import decode_row
from lakestore.format.kv import ROW_KIND_NAMES, VALUE_KIND
from lakestore.meta.consumer import ConsumerManager
from lakestore.meta.file_scan import read_entries
from lakestore.meta.kinds import StreamStart
from lakestore.meta.manifest import ADD, ManifestStore
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot, SnapshotManager
from lakestore.read.split_read import SplitReader

ROW_KIND_COLUMN = "_row_kind"
_KIND_NAMES = from_pylist([ROW_KIND_NAMES[i] for i in range(4)], pa.string())  # by _VALUE_KIND


class ChangeReader:
    def __init__(self, schema: TableSchema, snapshots: SnapshotManager, manifests: ManifestStore, reader: SplitReader) -> None:
        self.schema = schema
        self.snapshots = snapshots
        self.manifests = manifests
        self.reader = reader
        self.primary_key = bool(schema.primary_keys)
        self.producer = schema.core_options().changelog_producer if self.primary_key else "none"
        self.partition_types = schema.types_of(schema.partition_keys)

    def output_schema(self, columns: Sequence[str]) -> pa.Schema:
        fields = [self.schema.arrow_schema().field(c) for c in columns]
        return pa.schema(fields + [pa.field(ROW_KIND_COLUMN, pa.string(), nullable=False)])

    def snapshot_changes(self, snapshot: Snapshot, columns: Sequence[str]) -> pa.Table:
        """The changes one snapshot committed, with a ``_row_kind`` column (+I, -U, +U, -D)."""
        if self.producer != "none":
            names = self.manifests.read_list(snapshot.changelog_manifest_list) if snapshot.changelog_manifest_list else []
        elif snapshot.commit_kind == "APPEND":
            names = self.manifests.read_list(snapshot.delta_manifest_list)
        else:
            names = []  # compaction changes no rows; overwrite is skipped as Paimon's streaming reads do
        parts = []
        for entry in read_entries(self.manifests, names):
            if entry.kind != ADD:
                continue
            values = decode_row(entry.partition, self.partition_types, source=self.manifests.manifest_dir)
            rows = self.reader.read_file(values, entry.bucket, entry.file, columns, system=self.primary_key)
            if self.primary_key:
                kinds = as_numpy(rows.column(VALUE_KIND)).astype(np.int64)
                rows = rows.select(list(columns))
            else:
                kinds = np.zeros(rows.num_rows, dtype=np.int64)
            parts.append(rows.append_column(ROW_KIND_COLUMN, _KIND_NAMES.take(indices(kinds))))
        schema = self.output_schema(columns)
        return pa.concat_tables([p.cast(schema) for p in parts]) if parts else pa.Table.from_batches([], schema=schema)

    def changes_between(self, from_snapshot_id: int, to_snapshot_id: int, columns: Sequence[str]) -> pa.Table:
        if to_snapshot_id < from_snapshot_id:
            raise ValueError(f"to_snapshot_id {to_snapshot_id} < from_snapshot_id {from_snapshot_id}")
        parts = [self.snapshot_changes(self.snapshots.get_for_changes(i), columns) for i in range(from_snapshot_id + 1, to_snapshot_id + 1)]
        return pa.concat_tables(parts) if parts else pa.Table.from_batches([], schema=self.output_schema(columns))


class StreamScan:
    """``poll()`` returns the next batch of changes (the initial full snapshot as +I rows first,
    when starting from "full"), or None when caught up. ``checkpoint()`` returns the position
    and, with a consumer id, persists it so a restarted consumer resumes exactly there."""

    def __init__(
        self,
        changes: ChangeReader,
        consumers: ConsumerManager,
        *,
        full_reader: object,
        columns: Sequence[str],
        start: StreamStart = "full",
        snapshot_id: int | None = None,
        timestamp_ms: int | None = None,
        consumer_id: str | None = None,
    ) -> None:
        self.changes = changes
        self.consumers = consumers
        self.columns = list(columns)
        self.consumer_id = consumer_id
        self._full_reader = full_reader
        self._initial: int | None = None
        stored = consumers.next_snapshot(consumer_id) if consumer_id else None
        latest = changes.snapshots.latest_id() or 0
        if stored is not None:
            self.next_snapshot = stored
        elif snapshot_id is not None:
            self.next_snapshot = snapshot_id
        elif timestamp_ms is not None:
            self.next_snapshot = self._first_at_or_after(timestamp_ms, latest)
        elif start == "latest":
            self.next_snapshot = latest + 1
        elif start == "full":
            self._initial = latest if latest else None
            self.next_snapshot = latest + 1
        else:
            raise ValueError(f"start must be 'full' or 'latest', got {start!r}")

    def _first_at_or_after(self, timestamp_ms: int, latest: int) -> int:
        for snapshot in self.changes.snapshots.snapshots():
            if snapshot.time_millis >= timestamp_ms:
                return snapshot.id
        return latest + 1

    def poll(self) -> pa.Table | None:
        if self._initial is not None:
            snapshot_id, self._initial = self._initial, None
            rows = self._full_reader(snapshot_id)  # type: ignore[operator]
            kinds = _KIND_NAMES.take(indices(np.zeros(rows.num_rows, dtype=np.int64)))  # +I
            return rows.select(self.columns).append_column(ROW_KIND_COLUMN, kinds)
        latest = self.changes.snapshots.latest_id() or 0
        if self.next_snapshot > latest:
            return None
        try:
            snapshot = self.changes.snapshots.get_for_changes(self.next_snapshot)
        except SnapshotNotFoundError as exc:
            raise SnapshotNotFoundError(
                f"snapshot {self.next_snapshot} expired before the stream read it; use a consumer-id to protect it,"
                " or keep changelogs longer than snapshots (changelog.num-retained.*, changelog.time-retained)"
            ) from exc
        out = self.changes.snapshot_changes(snapshot, self.columns)
        self.next_snapshot += 1
        return out

    def __iter__(self) -> Iterator[pa.Table]:
        while (batch := self.poll()) is not None:
            yield batch

    def checkpoint(self) -> int:
        if self.consumer_id is not None:
            self.consumers.record(self.consumer_id, self.next_snapshot)
        return self.next_snapshot
