"""Reads over time: the changes committed between two snapshots (``incremental-between``) and a
streaming scan that starts from a full snapshot (or latest, a snapshot id, a timestamp, or a
consumer's stored position) and then returns each new snapshot's changes.

Changes come from the changelog files where the table's ``changelog-producer`` writes them,
otherwise from the data files each APPEND snapshot added (its delta), as Paimon reads them.

The full phase of a stream (``start="full"``) on a table whose changelog comes from compaction
reads only what a changelog was already committed for, as Paimon's ``DataTableStreamScan``
does: ``lookup`` reads the levels above 0, ``full-compaction`` only the last level. The rows
still below arrive later, through the changelog of the compaction that moves them up; read in
the full phase too, they would arrive twice (and the changelog would retract rows the stream
never delivered). lakestore's own lookup writers commit the changelog of their level-0 files
with them: those files are read in the full phase (``ChangeReader.full_phase_levels``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from lakestore.errors import SnapshotNotFoundError
from lakestore.format.arrow_ops import as_numpy, from_pylist, indices
from lakestore.format.binary_row import decode_row
from lakestore.format.kv import ROW_KIND_NAMES, VALUE_KIND
from lakestore.meta.consumer import ConsumerManager
from lakestore.meta.file_scan import live_entries, read_entries
from lakestore.meta.kinds import StreamStart
from lakestore.meta.manifest import ADD, DataFileMeta, ManifestStore
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot, SnapshotManager
from lakestore.read.planner import Levels, Split
from lakestore.read.split_read import SplitReader

ROW_KIND_COLUMN = "_row_kind"
# the rows of a snapshot (its id) on the given levels (None: every level)
FullReader = Callable[[int, Levels | None], pa.Table]
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
        options = schema.core_options()
        self.data_evolution = options.row_tracking and options.data_evolution and not self.primary_key

    def full_phase_levels(self, snapshot: Snapshot) -> Levels | None:
        """What a stream's full phase reads of ``snapshot`` (Paimon's
        ``DataTableStreamScan.tryFirstPlan``): with the ``full-compaction`` producer the last
        level (``num-levels`` - 1) only; with ``lookup`` the levels above 0, plus the level-0
        files whose changelog was already committed; with the other producers every level.

        Paimon's lookup writers commit a level-0 file without changelog (its changelog comes with
        the compaction that moves it up, in a COMPACT snapshot), lakestore's commit the changelog
        of a level-0 file in the APPEND snapshot that adds it: such files (the APPEND snapshot
        that added them has changelog, or is no longer there) are read in the full phase."""
        if self.producer == "full-compaction":
            top = self.schema.core_options().num_levels - 1
            return Levels(top, top)
        if self.producer != "lookup":
            return None
        if self.schema.reads_skip_level0:
            return Levels(1)  # their reads never see level 0 (ScanPlanner)
        pending = {e.file.file_name for e in live_entries(self.manifests, snapshot, entry_filter=lambda e: e.file.level == 0)}
        committed: set[str] = set()
        earliest = self.snapshots.earliest_id() or snapshot.id
        sid = snapshot.id
        while pending and sid >= earliest and self.snapshots.exists(sid):
            older = snapshot if sid == snapshot.id else self.snapshots.get(sid)
            sid -= 1
            if older.commit_kind != "APPEND":
                continue
            added = {
                e.file.file_name
                for e in read_entries(self.manifests, self.manifests.read_list(older.delta_manifest_list))
                if e.kind == ADD and e.file.file_name in pending
            }
            if added and self._has_changelog(older):
                committed |= added
            pending -= added
        return Levels(1, files=frozenset(committed | pending))  # pending: added by an expired snapshot

    def _has_changelog(self, snapshot: Snapshot) -> bool:
        if not snapshot.changelog_manifest_list:
            return False
        if snapshot.changelog_record_count is not None:
            return snapshot.changelog_record_count > 0
        return any(True for e in read_entries(self.manifests, self.manifests.read_list(snapshot.changelog_manifest_list)) if e.kind == ADD)

    def output_schema(self, columns: Sequence[str]) -> pa.Schema:
        fields = [self.schema.arrow_schema().field(c) for c in columns]
        return pa.schema(fields + [pa.field(ROW_KIND_COLUMN, pa.string(), nullable=False)])

    def _data_evolution_changes(self, snapshots: Sequence[Snapshot], columns: Sequence[str]) -> pa.Table:
        """Data-evolution tables (every row +I), as Paimon 2.0 reads what snapshots added: the
        files their APPEND commits added, per bucket grouped by row-id range and merged among
        themselves only (an update of some columns reads as rows holding just those columns when
        the rows it updates were added before)."""
        splits: dict[tuple[bytes, int], tuple[int, list[DataFileMeta]]] = {}
        for snapshot in snapshots:
            if snapshot.commit_kind != "APPEND":
                continue
            for entry in read_entries(self.manifests, self.manifests.read_list(snapshot.delta_manifest_list)):
                if entry.kind == ADD:
                    splits.setdefault((entry.partition, entry.bucket), (entry.total_buckets, []))[1].append(entry.file)
        parts = []
        for (partition, bucket), (total, files) in splits.items():
            values = decode_row(partition, self.partition_types, source=self.manifests.manifest_dir)
            rows = self.reader.read(Split(partition, values, bucket, total, tuple(files), raw_convertible=False), list(columns), None)
            parts.append(rows.append_column(ROW_KIND_COLUMN, _KIND_NAMES.take(indices(np.zeros(rows.num_rows, dtype=np.int64)))))
        schema = self.output_schema(columns)
        return pa.concat_tables([p.cast(schema) for p in parts]) if parts else pa.Table.from_batches([], schema=schema)

    def snapshot_changes(self, snapshot: Snapshot, columns: Sequence[str]) -> pa.Table:
        """The changes one snapshot committed, with a ``_row_kind`` column (+I, -U, +U, -D)."""
        if self.data_evolution:
            return self._data_evolution_changes([snapshot], columns)
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
        if self.data_evolution:  # merged over the range, as Paimon's incremental reads ($audit_log)
            snapshots = [self.snapshots.get_for_changes(i) for i in range(from_snapshot_id + 1, to_snapshot_id + 1)]
            return self._data_evolution_changes(snapshots, columns)
        parts = [self.snapshot_changes(self.snapshots.get_for_changes(i), columns) for i in range(from_snapshot_id + 1, to_snapshot_id + 1)]
        return pa.concat_tables(parts) if parts else pa.Table.from_batches([], schema=self.output_schema(columns))


class StreamScan:
    """``poll()`` returns the next batch of changes (the initial full snapshot as +I rows first,
    when starting from "full": of a lookup / full-compaction changelog table, only its compacted
    levels, see the module docstring), or None when caught up. ``checkpoint()`` returns the position
    and, with a consumer id, persists it so a restarted consumer resumes exactly there."""

    def __init__(
        self,
        changes: ChangeReader,
        consumers: ConsumerManager,
        *,
        full_reader: FullReader,
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
        """The next changes (the full table first, with ``start="full"``), with a ``_row_kind``
        column; None when the stream has read every committed snapshot (poll again later).

        Raises:
            SnapshotNotFoundError: the next snapshot expired before the stream read it.
            CorruptMetadataError: a snapshot or manifest is not valid Paimon metadata.
            OSError: the file system failed.
        """
        if self._initial is not None:
            snapshot_id, self._initial = self._initial, None
            levels = self.changes.full_phase_levels(self.changes.snapshots.get(snapshot_id))
            rows = self._full_reader(snapshot_id, levels)
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
        """Store the stream's position (with a ``consumer_id``) and return the next snapshot id it
        will read; a restarted stream of the same consumer resumes there.

        Raises:
            OSError: the consumer file could not be written.
        """
        if self.consumer_id is not None:
            self.consumers.record(self.consumer_id, self.next_snapshot)
        return self.next_snapshot
