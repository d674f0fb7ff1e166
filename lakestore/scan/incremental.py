"""Incremental batch reads: Paimon's ``incremental-between`` (two snapshot ids, or two tags),
``incremental-between-timestamp`` and ``incremental-between-scan-mode``, read as Paimon 2.0's
``AbstractDataTableScan.createIncrementalStartingScanner`` plans them and its table reads read
them.

- ``delta`` (``auto`` on a table without changelog producer): every row of the data files each
  APPEND snapshot in ``start + 1 .. end`` added, whatever its row kind, unmerged (COMPACT and
  OVERWRITE snapshots are skipped).
- ``changelog`` (``auto`` with a changelog producer): every row of the changelog files of those
  snapshots (OVERWRITE snapshots skipped).
- ``diff`` (and two tags, unless ``incremental-between-tag-to-snapshot``): the files of the end
  snapshot that the start snapshot does not hold, per bucket. A primary-key table merges the
  files each side holds alone (deletes dropped) and returns the end side's rows that differ
  from the start side's row of the same key; an append table returns the rows of the end
  side's new files.

Rows come with their row kind (``_row_kind``); ``Table.to_arrow`` drops it, as Paimon's batch
read returns every row without showing it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from lakestore.errors import SnapshotNotFoundError, TagNotFoundError, UnsupportedTableError
from lakestore.format.arrow_ops import as_numpy, from_pylist, indices
from lakestore.format.binary_row import decode_row
from lakestore.format.kv import ROW_KIND_NAMES, VALUE_KIND
from lakestore.meta.file_scan import read_entries
from lakestore.meta.manifest import ADD
from lakestore.meta.snapshot import Snapshot
from lakestore.read.planner import ScanPlanner, Split, raw_convertible
from lakestore.read.predicate import Predicate
from lakestore.scan.time_travel import only_scan_bucket, scan_bucket, snapshot_at, tag_reader

if TYPE_CHECKING:
    from lakestore.meta.schema import TableSchema
    from lakestore.store import FileStore

ROW_KIND_COLUMN = "_row_kind"
SCAN_MODES = ("auto", "delta", "changelog", "diff")
_KIND_NAMES = from_pylist([ROW_KIND_NAMES[i] for i in range(4)], pa.string())

Bounds = str | tuple[Any, Any] | Sequence[Any]


@dataclasses.dataclass(frozen=True)
class Incremental:
    """What an incremental read covers: ``between`` (two snapshot ids or two tag names) or
    ``between_timestamp`` (two epoch millis, or two timestamps ``yyyy-MM-dd HH:mm:ss`` in
    local time), and the scan mode."""

    between: tuple[str, str] | None = None
    between_timestamp: tuple[str, str] | None = None
    mode: str = "auto"
    tag_to_snapshot: bool = False

    @classmethod
    def of(
        cls,
        between: Bounds | None = None,
        between_timestamp: Bounds | None = None,
        mode: str | None = None,
        *,
        tag_to_snapshot: bool = False,
    ) -> Incremental:
        if between is not None and between_timestamp is not None:
            raise ValueError("give incremental_between or incremental_between_timestamp, not both")
        mode = (mode or "auto").strip().lower()
        if mode not in SCAN_MODES:
            raise ValueError(f"incremental-between-scan-mode must be one of {', '.join(SCAN_MODES)}, got {mode!r}")
        return cls(
            _pair(between, "incremental-between") if between is not None else None,
            _pair(between_timestamp, "incremental-between-timestamp") if between_timestamp is not None else None,
            mode,
            tag_to_snapshot,
        )

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> Incremental | None:
        """The incremental read the options name (None: they name none)."""
        between, timestamps = options.get("incremental-between"), options.get("incremental-between-timestamp")
        if between is None and timestamps is None:
            return None
        tag_to_snapshot = str(options.get("incremental-between-tag-to-snapshot", "false")).strip().lower() == "true"
        # Paimon reads incremental-between first when both are set
        return cls.of(
            between,
            None if between is not None else timestamps,
            options.get("incremental-between-scan-mode"),
            tag_to_snapshot=tag_to_snapshot,
        )


def _pair(value: Bounds, name: str) -> tuple[str, str]:
    parts = [p for p in value.split(",")] if isinstance(value, str) else [str(v) for v in value]
    if len(parts) != 2:
        raise ValueError(f"{name} must name a start (exclusive) and an end (inclusive), such as '5,10'; got {value!r}")
    return parts[0], parts[1]


def _millis(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        # Paimon's DateTimeUtils.parseTimestampData in the JVM's default time zone
        return int(dt.datetime.fromisoformat(text.strip()).timestamp() * 1000)
    except ValueError as exc:
        raise ValueError(f"incremental-between-timestamp must name two epoch millis or timestamps; got {text!r}") from exc


class IncrementalRead:
    def __init__(self, table: FileStore, spec: Incremental) -> None:
        self.table = table
        self.spec = spec
        self.schema: TableSchema = table.schema
        self.snapshots = table.snapshot_manager
        self.primary_key = bool(self.schema.primary_keys)
        options = self.schema.core_options()
        self.data_evolution = options.row_tracking and options.data_evolution and not self.primary_key
        producer = options.changelog_producer if self.primary_key else "none"
        mode = spec.mode
        if mode == "auto":
            mode = "delta" if producer == "none" else "changelog"
        self.mode = mode

    # -- planning (AbstractDataTableScan.createIncrementalStartingScanner) ----------------------
    def plan(self) -> tuple[str, Any]:
        """("empty", None), ("delta"/"changelog", (start id, end id)) or ("diff", (start, end))."""
        spec = self.spec
        if spec.between is not None:
            return self._plan_between(*spec.between)
        assert spec.between_timestamp is not None
        return self._plan_timestamps(*(_millis(x) for x in spec.between_timestamp))

    def _tag(self, name: str) -> Snapshot | None:
        try:
            return tag_reader(self.table).get(name).snapshot
        except (TagNotFoundError, ValueError):
            return None

    def _plan_between(self, start: str, end: str) -> tuple[str, Any]:
        start_tag, end_tag = self._tag(start), self._tag(end)
        if start_tag is not None and end_tag is not None:
            if self.spec.tag_to_snapshot:
                return self._delta_range(start_tag.id, end_tag.id)
            if end_tag.id < start_tag.id:
                raise ValueError(f"tag end {end} (snapshot {end_tag.id}) should be >= tag start {start} (snapshot {start_tag.id})")
            if start_tag.id == end_tag.id:
                return "empty", None
            return "diff", (start_tag, end_tag)
        try:
            start_id, end_id = int(start), int(end)
        except ValueError:
            raise ValueError(f"incremental-between: no two tags {start!r} and {end!r}, and they are not two snapshot ids") from None
        if end_id < start_id:
            raise ValueError(f"incremental-between: ending snapshot id {end_id} should be >= starting snapshot id {start_id}")
        if self.snapshots.earliest_id() is None or start_id == end_id:
            return "empty", None
        if self.mode == "diff":
            return "diff", (self.snapshots.get(start_id), self.snapshots.get(end_id))
        return self._delta_range(start_id, end_id)

    def _delta_range(self, start_id: int, end_id: int) -> tuple[str, Any]:
        earliest, latest = self.snapshots.earliest_id() or 0, self.snapshots.latest_id() or 0
        if not (start_id >= earliest - 1 and end_id <= latest):
            raise ValueError(f"the scan snapshot id range [{start_id}, {end_id}] is out of the available range [{earliest}, {latest}]")
        if self.mode == "diff":
            raise ValueError("incremental-between-tag-to-snapshot reads deltas or changelogs, not diffs")
        return self.mode, (start_id, end_id)

    def _at_or_before(self, millis: int) -> Snapshot | None:
        try:
            return snapshot_at(self.table, millis)
        except SnapshotNotFoundError:
            return None

    def _plan_timestamps(self, start: int, end: int) -> tuple[str, Any]:
        earliest_id, latest = self.snapshots.earliest_id(), self.snapshots.latest()
        if earliest_id is None or latest is None:
            return "empty", None
        earliest = self.snapshots.get(earliest_id)
        if end < start:
            raise ValueError(f"incremental-between-timestamp: ending timestamp {end} should be >= starting timestamp {start}")
        if start == end or start > latest.time_millis or end < earliest.time_millis:
            return "empty", None
        start_snap, end_snap = self._at_or_before(start), self._at_or_before(end)
        if self.mode == "diff":
            return "diff", (start_snap or earliest, end_snap or latest)
        start_id = earliest.id - 1 if start_snap is None or earliest.time_millis > start else start_snap.id
        return self.mode, (start_id, end_snap.id if end_snap is not None else latest.id)

    # -- reading -------------------------------------------------------------------------------
    def output_schema(self, columns: Sequence[str]) -> pa.Schema:
        full = self.schema.arrow_schema()
        return pa.schema([full.field(c) for c in columns] + [pa.field(ROW_KIND_COLUMN, pa.string(), nullable=False)])

    def read(self, columns: Sequence[str], predicate: Predicate | None = None) -> pa.Table:
        """The rows, with ``_row_kind``, restricted to ``columns`` and filtered by ``predicate``."""
        kind, bounds = self.plan()
        names = self.schema.field_names if predicate is not None else list(columns)
        schema = self.output_schema(names)
        if kind == "empty":
            parts: list[pa.Table] = []
        elif kind == "diff":
            parts = self._diff(bounds[0], bounds[1], names)
        elif self.data_evolution and self.mode == "delta":
            parts = self._data_evolution_delta(bounds[0], bounds[1], names)
        else:
            parts = [self._snapshot_files(sid, names) for sid in range(bounds[0] + 1, bounds[1] + 1)]
        parts = [p.cast(schema) for p in parts if p.num_rows]
        out = pa.concat_tables(parts) if parts else pa.Table.from_batches([], schema=schema)
        if predicate is not None:
            out = out.filter(predicate.to_arrow()).select([*columns, ROW_KIND_COLUMN])
        return out

    def _snapshot_files(self, snapshot_id: int, columns: Sequence[str]) -> pa.Table:
        snapshot = self.snapshots.get_for_changes(snapshot_id)
        manifests = self.table.manifests()
        if self.mode == "delta":
            names = manifests.read_list(snapshot.delta_manifest_list) if snapshot.commit_kind == "APPEND" else []
        elif snapshot.commit_kind != "OVERWRITE" and snapshot.changelog_manifest_list:
            names = manifests.read_list(snapshot.changelog_manifest_list)
        else:
            names = []
        reader = self.table.split_reader()
        types = self.schema.types_of(self.schema.partition_keys)
        parts = []
        bucket = scan_bucket(self.schema.options)
        for entry in read_entries(manifests, names):
            if entry.kind != ADD or (bucket is not None and entry.bucket != bucket):
                continue
            values = decode_row(entry.partition, types, source=manifests.manifest_dir)
            rows = reader.read_file(values, entry.bucket, entry.file, columns, system=self.primary_key)
            if self.primary_key:
                kinds = as_numpy(rows.column(VALUE_KIND)).astype(np.int64)
                rows = rows.select(list(columns))
            else:
                kinds = np.zeros(rows.num_rows, dtype=np.int64)
            parts.append(rows.append_column(ROW_KIND_COLUMN, _KIND_NAMES.take(indices(kinds))))
        schema = self.output_schema(columns)
        return pa.concat_tables([p.cast(schema) for p in parts]) if parts else pa.Table.from_batches([], schema=schema)

    def _data_evolution_delta(self, start_id: int, end_id: int, columns: Sequence[str]) -> list[pa.Table]:
        """Data-evolution tables, as Paimon 2.0's incremental delta reads: the files the APPEND
        snapshots ``start + 1 .. end`` added, per (partition, bucket) grouped by row-id range and
        merged column-wise among themselves only (a file holding some columns of older rows
        gives rows with just those columns when no file of the range holds the others)."""
        manifests = self.table.manifests()
        types = self.schema.types_of(self.schema.partition_keys)
        bucket = scan_bucket(self.schema.options)
        splits: dict[tuple[bytes, int], tuple[int, list[Any]]] = {}
        for snapshot_id in range(start_id + 1, end_id + 1):
            snapshot = self.snapshots.get_for_changes(snapshot_id)
            if snapshot.commit_kind != "APPEND":
                continue
            for entry in read_entries(manifests, manifests.read_list(snapshot.delta_manifest_list)):
                if entry.kind == ADD and (bucket is None or entry.bucket == bucket):
                    splits.setdefault((entry.partition, entry.bucket), (entry.total_buckets, []))[1].append(entry.file)
        reader = self.table.split_reader()
        parts = []
        for (partition, bucket_id), (total, files) in splits.items():
            values = decode_row(partition, types, source=manifests.manifest_dir)
            split = Split(partition, values, bucket_id, total, tuple(files), raw_convertible=False)
            rows = reader.read(split, list(columns), None)
            kinds = _KIND_NAMES.take(indices(np.zeros(rows.num_rows, dtype=np.int64)))
            parts.append(rows.append_column(ROW_KIND_COLUMN, kinds))
        return parts

    def _diff(self, start: Snapshot, end: Snapshot, columns: Sequence[str]) -> list[pa.Table]:
        if self.data_evolution:
            raise UnsupportedTableError(
                f"cannot read table {self.table.path}: a diff (incremental-between-scan-mode=diff, or between two tags) of a"
                " data-evolution table is not implemented (Paimon 2.0.0 fails on it too)",
                options=("data-evolution.enabled",),
            )
        if self.primary_key and self.schema.core_options().deletion_vectors:
            raise UnsupportedTableError(
                f"cannot read table {self.table.path}: a diff (incremental-between-scan-mode=diff, or between two tags) of a"
                " deletion-vector table merges level 0 with the vector-masked levels above, which lakestore does not implement",
                options=("deletion-vectors.enabled",),
            )
        planner = ScanPlanner(self.schema, self.table.manifests())
        # Paimon's incremental scans keep level 0 (AbstractBatchTableScan): first-row tables merge it in
        planner.skip_level0 = False
        before = {(s.partition, s.bucket): s for s in only_scan_bucket(self.schema.options, planner.plan(start))}
        after = {(s.partition, s.bucket): s for s in only_scan_bucket(self.schema.options, planner.plan(end))}
        reader = self.table.split_reader()
        names = self.schema.field_names
        full = self.schema.arrow_schema()
        parts = []
        for key, new in after.items():
            old = before.get(key)
            common = {(f.file_name, f.level) for f in old.files} if old is not None else set()
            new_files = tuple(f for f in new.files if (f.file_name, f.level) not in common)
            if not new_files:
                continue
            rows = reader.read(_subset(new, new_files, self.primary_key), names, None).cast(full)
            if self.primary_key and old is not None:
                old_files = tuple(f for f in old.files if (f.file_name, f.level) not in {(g.file_name, g.level) for g in new.files})
                if old_files:
                    seen = {_row_key(r) for r in reader.read(_subset(old, old_files, True), names, None).cast(full).to_pylist()}
                    keep = [i for i, r in enumerate(rows.to_pylist()) if _row_key(r) not in seen]
                    rows = rows.take(pa.array(keep, pa.int64()))
            rows = rows.select(list(columns))
            parts.append(rows.append_column(ROW_KIND_COLUMN, _KIND_NAMES.take(indices(np.zeros(rows.num_rows, dtype=np.int64)))))
        return parts


def _subset(split: Split, files: tuple[Any, ...], primary_key: bool) -> Split:
    names = {f.file_name for f in files}
    return dataclasses.replace(
        split,
        files=files,
        raw_convertible=split.raw_convertible if split.deletion_files else raw_convertible(files, primary_key=primary_key),
        deletion_files=tuple(d for d in split.deletion_files if d[0] in names),
    )


def _row_key(row: Mapping[str, Any]) -> str:
    return json.dumps(row, default=repr, sort_keys=True)
