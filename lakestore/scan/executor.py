"""Executing a :class:`~lakestore.scan.table_scan.ScanSpec` over a table's ``FileStore``: which
snapshot and schema a batch read sees (time travel, or the table's own ``scan.*`` options), its
splits, an incremental range, a read over a fallback branch, and the rows.

``Table.scan()`` returns a ``TableScan`` whose source is a ``StoreScan`` of the table's store."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from lakestore.errors import SchemaMismatchError
from lakestore.meta.file_scan import live_entries
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.read.data_evolution import ROW_TRACKING_FIELDS
from lakestore.read.planner import Levels, ScanPlan, ScanPlanner, Split
from lakestore.read.predicate import Predicate
from lakestore.scan.fallback import two_branch_parts
from lakestore.scan.incremental import ROW_KIND_COLUMN as _INCREMENTAL_KIND
from lakestore.scan.incremental import Incremental, IncrementalRead
from lakestore.scan.table_scan import ScanSpec
from lakestore.scan.time_travel import file_created_epoch_ms, only_scan_bucket, resolve, scan_from_options
from lakestore.store import FileStore

_TRAVEL = ("snapshot_id", "tag", "timestamp_ms", "watermark")


def select_columns(schema: TableSchema, columns: Sequence[str] | None) -> list[str]:
    """``columns`` (default: every column of ``schema``), checked against it.

    Raises:
        SchemaMismatchError: a column ``schema`` does not have.
    """
    names = schema.field_names
    if columns is None:
        return names
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise SchemaMismatchError(f"unknown columns {unknown} (columns: {names})")
    return list(columns)


def check_filter(schema: TableSchema, filter: Predicate | None) -> None:  # noqa: A002
    """Refuse a filter on columns ``schema`` does not have (``SchemaMismatchError``)."""
    if filter is not None:
        unknown = [c for c in filter.columns() if c not in schema.field_names]
        if unknown:
            raise SchemaMismatchError(f"filter names unknown columns {unknown} (columns: {schema.field_names})")


@dataclass(frozen=True)
class StoreScan:
    """Runs scans of one table's store (what ``TableScan`` calls)."""

    store: FileStore

    @property
    def name(self) -> str:
        """The table's identifier (DuckDB's default view name)."""
        return self.store.identifier

    # -- what a read sees ----------------------------------------------------------------------
    def resolve_snapshot(
        self, snapshot_id: int | None = None, tag: str | None = None, timestamp_ms: int | None = None, watermark: int | None = None
    ) -> Snapshot | None:
        """The snapshot a read sees: the latest, or the one time travel names."""
        return resolve(self.store, snapshot_id=snapshot_id, tag=tag, timestamp_ms=timestamp_ms, watermark=watermark)

    def read_target(self, travel: tuple[Any, ...]) -> tuple[Snapshot | None, TableSchema]:
        """The snapshot to read and its schema: the current schema for the latest snapshot, the
        snapshot's own schema when time travel names one. Without time-travel arguments, the
        table's own ``scan.*`` options decide, as Paimon's batch reads honour them."""
        store = self.store
        store.schema.require_supported("read", table=store.path)
        if all(x is None for x in travel):
            scan = scan_from_options(store, store.schema.options)
            if scan.incremental:
                raise ValueError(f"table {store.identifier} has incremental-between options: read it with to_arrow / to_batches")
            if not scan.travel:
                return self.resolve_snapshot(), store.schema
            snapshot = self.resolve_snapshot(**scan.travel)
            return snapshot, store.schema_at(snapshot)
        snapshot = self.resolve_snapshot(*travel)
        return snapshot, store.schema_at(snapshot)

    def _incremental(self, spec: ScanSpec) -> Incremental | None:
        """The incremental read of the scan, else of the table's options (None: none)."""
        options = self.store.schema.options
        if spec.incremental:
            if any(x is not None for x in spec.travel):
                raise ValueError("give time travel (snapshot_id=, tag=, timestamp_ms=, watermark=) or an incremental read, not both")
            tag_to_snapshot = str(options.get("incremental-between-tag-to-snapshot", "false")).strip().lower() == "true"
            return Incremental.of(
                spec.incremental_between,
                spec.incremental_between_timestamp,
                spec.incremental_scan_mode or options.get("incremental-between-scan-mode"),
                tag_to_snapshot=tag_to_snapshot,
            )
        if spec.incremental_scan_mode is not None:
            raise ValueError("incremental_scan_mode needs incremental_between= or incremental_between_timestamp=")
        if any(x is not None for x in spec.travel):
            return None
        self.store.schema.require_supported("read", table=self.store.path)
        if not scan_from_options(self.store, options).incremental:
            return None
        return Incremental.from_options(options)

    def _read_incremental(self, incremental: Incremental, spec: ScanSpec) -> pa.Table:
        schema = self.store.schema
        schema.require_supported("read", table=self.store.path)
        selected = select_columns(schema, spec.columns)
        check_filter(schema, spec.filter)
        rows = IncrementalRead(self.store, incremental).read(selected, spec.filter).drop_columns([_INCREMENTAL_KIND])
        return rows if spec.limit is None else rows.slice(0, spec.limit)

    def _created_after(self, travel: tuple[Any, ...]) -> int | None:
        """``scan.file-creation-time-millis`` of the table's options, unless the read names a snapshot."""
        if any(x is not None for x in travel):
            return None
        return scan_from_options(self.store, self.store.schema.options).created_after

    # -- planning ------------------------------------------------------------------------------
    def _plan_splits(
        self, snapshot: Snapshot | None, schema: TableSchema, filter: Predicate | None, created_after: int | None = None
    ) -> list[Split]:  # noqa: A002
        """The splits of a batch read: ``scan.bucket`` applied; with ``created_after`` only the files
        created at or after it (Paimon's ``FileCreationTimeStartingScanner``)."""
        manifests = self.store.manifests()
        levels = None
        if created_after is not None:
            names = {
                e.file.file_name
                for e in live_entries(manifests, snapshot)
                if e.file.creation_time_ms is not None and file_created_epoch_ms(e.file.creation_time_ms) >= created_after
            }
            levels = Levels(low=1 << 30, files=frozenset(names))  # the named files only, whatever their level
        plan = ScanPlanner(schema, manifests).plan(snapshot, filter, levels=levels)
        return ScanPlan(only_scan_bucket(self.store.schema.options, plan), plan.files_skipped_by_index)

    def _read_plan(
        self, snapshot: Snapshot | None, schema: TableSchema, spec: ScanSpec, created_after: int | None
    ) -> tuple[list[str], list[Split], pa.Schema]:
        columns = spec.columns
        # row-tracking tables: _ROW_ID and _SEQUENCE_NUMBER on request (Paimon's $row_tracking columns)
        tracking = ROW_TRACKING_FIELDS if schema.core_options().row_tracking and not schema.primary_keys else {}
        plain = None if columns is None else [c for c in columns if c not in tracking or c in schema.field_names]
        selected = select_columns(schema, plain)  # validates the table's own columns
        if columns is not None:
            selected = list(columns)
        check_filter(schema, spec.filter)
        splits = self._plan_splits(snapshot, schema, spec.filter, created_after)
        full = schema.arrow_schema()
        return selected, splits, pa.schema([full.field(c) if c in schema.field_names else tracking[c] for c in selected])

    def _two_branch_read(
        self, snapshot: Snapshot | None, schema: TableSchema, spec: ScanSpec
    ) -> tuple[Iterator[pa.Table], pa.Schema] | None:
        """A batch read over this branch and its ``scan.fallback-branch`` (or ``scan.primary-branch``),
        as Paimon's ``FallbackReadFileStoreTable``: per branch, the rows of the partitions it
        serves; None when the table reads one branch."""
        options = self.store.schema.options
        if not (str(options.get("scan.fallback-branch") or "").strip() or str(options.get("scan.primary-branch") or "").strip()):
            return None
        given = {k: v for k, v in zip(_TRAVEL, spec.travel, strict=True) if v is not None}
        if not given:
            given = scan_from_options(self.store, options).travel or {}
        selected = select_columns(schema, spec.columns)
        check_filter(schema, spec.filter)
        parts = two_branch_parts(self.store, snapshot, schema, selected, spec.filter, given)
        if parts is None:
            return None
        full = schema.arrow_schema()
        output = pa.schema([full.field(c) for c in selected])

        def tables() -> Iterator[pa.Table]:
            for part in parts:
                if part.splits:
                    theirs = pa.schema([pa.field(c, f.type, f.nullable) for c, f in zip(part.columns, output, strict=True)])
                    rows = part.reader.read_all(part.splits, part.columns, spec.filter, theirs)
                    yield rows.rename_columns(selected).cast(output)
            yield output.empty_table()

        return tables(), output

    # -- running (ScanSource) ------------------------------------------------------------------
    def snapshot(self, spec: ScanSpec) -> Snapshot | None:
        """The snapshot a read of ``spec`` sees (None: nothing committed yet)."""
        if spec.incremental:
            raise ValueError("an incremental scan reads a range of snapshots, not one")
        return self.read_target(spec.travel)[0]

    def plan(self, spec: ScanSpec) -> list[Split]:
        """The splits a read of ``spec`` merges."""
        snapshot, schema = self.read_target(spec.travel)
        return self._plan_splits(snapshot, schema, spec.filter, self._created_after(spec.travel))

    def read_arrow(self, spec: ScanSpec) -> pa.Table:
        """The rows of ``spec`` as one Arrow table."""
        incremental = self._incremental(spec)
        if incremental is not None:
            return self._read_incremental(incremental, spec)
        snapshot, schema = self.read_target(spec.travel)
        two = self._two_branch_read(snapshot, schema, spec)
        if two is not None:
            rows = pa.concat_tables(list(two[0]))
            return rows if spec.limit is None else rows.slice(0, spec.limit)
        selected, splits, arrow_schema = self._read_plan(snapshot, schema, spec, self._created_after(spec.travel))
        return self.store.split_reader(schema).read_all(splits, selected, spec.filter, arrow_schema, limit=spec.limit)

    def read_batches(self, spec: ScanSpec, batch_size: int | None) -> pa.RecordBatchReader:
        """The rows of ``spec`` as a reader that reads split by split (bounded memory)."""
        incremental = self._incremental(spec)
        if incremental is not None:
            rows = self._read_incremental(incremental, spec)
            return pa.RecordBatchReader.from_batches(rows.schema, rows.to_batches(max_chunksize=batch_size))
        snapshot, schema = self.read_target(spec.travel)
        two = self._two_branch_read(snapshot, schema, spec)
        if two is not None:
            rows = pa.concat_tables(list(two[0]))
            rows = rows if spec.limit is None else rows.slice(0, spec.limit)
            return pa.RecordBatchReader.from_batches(two[1], rows.to_batches(max_chunksize=batch_size))
        selected, splits, arrow_schema = self._read_plan(snapshot, schema, spec, self._created_after(spec.travel))
        tables = self.store.split_reader(schema).iter_tables(splits, selected, spec.filter, limit=spec.limit)
        batches = (b for t in tables for b in t.cast(arrow_schema).to_batches(max_chunksize=batch_size))
        return pa.RecordBatchReader.from_batches(arrow_schema, batches)
