"""A Paimon table: write, commit, scan and read, time travel by snapshot."""

from __future__ import annotations

import dataclasses
import functools
import logging
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack, cast

import pyarrow as pa

from lakestore.commit.callbacks import CommitCallback, CommitProperties
from lakestore.commit.commit import CommitHook, Overwrite, TableCommit
from lakestore.commit.protocol import CommitId, commit_or_abort, write_and_commit
from lakestore.commit.snapshot_commit import RenamingSnapshotCommit, SnapshotCommit
from lakestore.compact import BucketCompactor, deletion_vectors_of
from lakestore.dml import delete_rows, update_rows, upsert_rows
from lakestore.errors import PartitionValueError, UnsupportedTableError
from lakestore.iceberg import IcebergSources
from lakestore.io.factory import file_io_for, publisher_for
from lakestore.io.fileio import FileIO
from lakestore.lifecycle.callbacks import expire_iceberg_snapshots, iceberg_sources, table_callbacks
from lakestore.maintenance import TableMaintenance
from lakestore.manage import TableManagement
from lakestore.meta.branch import MAIN_BRANCH
from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.consumer import ConsumerManager
from lakestore.meta.kinds import CommitKind, StreamStart
from lakestore.meta.options import CoreOptions
from lakestore.meta.partitions import check_partition_spec
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from lakestore.read.planner import ScanPlanner
from lakestore.read.predicate import Predicate
from lakestore.scan import ScanArgs, StoreScan, TableScan, scan_spec
from lakestore.scan.changes import ChangeReader, StreamScan
from lakestore.scan.executor import select_columns
from lakestore.store import FileStore
from lakestore.system import SystemTables, TableState
from lakestore.write.file_writer import DataFileWriter
from lakestore.write.postpone import PostponeTableWrite
from lakestore.write.table_write import InputData, TableWrite
from lakestore.write.update_columns import write_column_updates

_log = logging.getLogger(__name__)
# Table options that steer Paimon's scans: honoured by batch reads, refused by ``Table.stream``.
_SCAN_OPTION_KEYS = (
    "scan.mode",
    "log.scan",
    "scan.snapshot-id",
    "scan.tag-name",
    "scan.timestamp-millis",
    "log.scan.timestamp-millis",
    "scan.timestamp",
    "scan.watermark",
    "scan.version",
    "scan.file-creation-time-millis",
    "incremental-between",
    "incremental-between-timestamp",
)

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    from typing_extensions import deprecated

    from lakestore.io.fileio import FileIO
    from lakestore.meta.file_info import FileInfo, IndexFileInfo
    from lakestore.meta.manifest import ManifestStore
    from lakestore.meta.schema import SchemaManager
    from lakestore.meta.snapshot import SnapshotManager
    from lakestore.read.planner import Split
    from lakestore.read.split_read import SplitReader


# Members that moved from ``Table``: name -> where it is now, relative to the table. The plumbing
# (files, managers, manifests) is the table's ``FileStore`` (``table.store``); lifecycle work is
# ``table.manage`` / ``table.maintenance``; snapshots a read sees and its splits are the scan's.
_MOVED: dict[str, str] = {
    **{
        name: f"manage.{name}"
        for name in (
            "create_tag",
            "delete_tag",
            "rename_tag",
            "tags",
            "branches",
            "create_branch",
            "delete_branch",
            "fast_forward",
            "rollback_to",
            "consumers",
            "reset_consumer",
        )
    },
    **{name: f"maintenance.{name}" for name in ("expire_snapshots", "expire_partitions", "remove_orphan_files", "check")},
    **{
        name: f"store.{name}"
        for name in (
            "file_io",
            "metadata_path",
            "schema_manager",
            "snapshot_manager",
            "manifests",
            "split_reader",
            "schema_at",
            "live_files",
            "delta_files",
            "index_files",
        )
    },
    "resolve_snapshot": "scan(snapshot_id=..., tag=..., timestamp_ms=..., watermark=...).snapshot()",
    "plan": "scan(filter=..., snapshot_id=..., ...).plan()",
}


class Table:
    """A table at a path, on one of its branches (default ``main``). Obtain one from
    ``Catalog.get_table`` (``"db.t"``, or ``"db.t$branch_<name>"`` for a branch) or ``Table.from_path``.

    ``path`` is the table directory (data and manifest files, shared by all branches). ``store``
    is the table's ``FileStore`` (``lakestore.store``: the branch's metadata path, file system,
    schema and snapshot managers, manifests, publisher and commit), which maintenance and
    compaction work on; the table is the facade a user calls: reads, writes, row-level changes,
    snapshots, and the policy its commits run afterwards (tags, expiration, Iceberg metadata)."""

    def __init__(
        self,
        path: str,
        *,
        file_io: FileIO | None = None,
        identifier: str | None = None,
        branch: str = MAIN_BRANCH,
        snapshot_commit: SnapshotCommit | None = None,
    ) -> None:
        """``snapshot_commit``: how the table's snapshots are published, the catalog's choice
        (default: ``RenamingSnapshotCommit``, the file system's atomic create-if-absent)."""
        path = path.rstrip("/")
        # The table's files (paths, FileIO, schema and snapshot managers, manifests, commit); the
        # table adds the read path and the policy: its commits run ``_commit_callbacks()``.
        self.store = FileStore.open(
            path,
            file_io=file_io or file_io_for(path),
            identifier=identifier,
            branch=branch,
            callbacks=self._commit_callbacks(),
            snapshot_commit=snapshot_commit,
        )
        # When post-commit maintenance last looked for expired partitions (epoch millis).
        self.last_partition_check_ms: int | None = None

    # -- the store's parts --------------------------------------------------------------------
    @property
    def path(self) -> str:
        """The table directory (data and manifest files, shared by all branches)."""
        return self.store.path

    @property
    def branch(self) -> str:
        """The branch this table object reads and writes."""
        return self.store.branch

    @property
    def identifier(self) -> str:
        """The table's name (``"db.t"``; the directory name without a catalog)."""
        return self.store.identifier

    @property
    def schema(self) -> TableSchema:
        """The latest schema (as of opening this table object)."""
        return self.store.schema

    @schema.setter
    def schema(self, schema: TableSchema) -> None:
        # a view of the table with other options (``copy.copy(table)``, then this): the view gets
        # a store of its own, sharing the manifest cache and the post-commit hook
        self.store = dataclasses.replace(self.store, schema=schema)

    @property
    def options(self) -> CoreOptions:
        """The typed options of the schema."""
        return self.store.options

    @classmethod
    def from_path(
        cls, path: str, *, file_io: FileIO | None = None, options: Mapping[str, str] | None = None, branch: str = MAIN_BRANCH
    ) -> Table:
        """Open the table at ``path`` without a catalog.

        Args:
            path: the table directory (local path or ``s3://...``).
            file_io: the file system to use (default: the one ``path`` and ``options`` name).
            options: catalog options (S3 endpoint/credentials, lock) when no ``file_io`` is given.
            branch: the branch to open.

        Raises:
            TableNotFoundError: no table (no schema file) at ``path`` or on ``branch``.
            OptionError: a file system lakestore cannot open, or an invalid lock option.
        """
        file_io = file_io or file_io_for(path, options)
        # with lock options (``lock.enabled``), the table's publishes hold the catalog lock
        return cls(path, file_io=file_io, branch=branch, snapshot_commit=RenamingSnapshotCommit(publisher_for(file_io, options)))

    def __repr__(self) -> str:
        branch = "" if self.branch == MAIN_BRANCH else f", branch={self.branch!r}"
        return f"Table({self.identifier!r}, path={self.path!r}{branch})"

    # -- metadata -----------------------------------------------------------------------------
    @property
    def arrow_schema(self) -> pa.Schema:
        """The table's columns (latest schema) as an Arrow schema."""
        return self.schema.arrow_schema()

    @property
    def partition_keys(self) -> tuple[str, ...]:
        """The partition columns."""
        return self.schema.partition_keys

    @property
    def primary_keys(self) -> tuple[str, ...]:
        """The primary-key columns (empty: an append table)."""
        return self.schema.primary_keys

    @property
    def inspect(self) -> SystemTables:
        """Paimon's system tables of this table (on its branch): ``table.inspect.snapshots()``,
        ``.files(snapshot_id=3)``, ``.audit_log()``, ... (``lakestore.system``)."""
        return SystemTables(
            TableState(self.store, resolve=lambda t: StoreScan(self.store).resolve_snapshot(t.snapshot_id, t.tag, t.timestamp_ms))
        )

    @property
    def maintenance(self) -> TableMaintenance:
        """Compaction, expiration, orphan cleanup and the consistency check of this table (on
        its branch): ``table.maintenance.expire_snapshots()``, ``.expire_partitions()``,
        ``.remove_orphan_files(dry_run=True)``, ``.compact(full=True)``, ``.check()``
        (``lakestore.maintenance``)."""
        return TableMaintenance(self.store, after_expire=self._expire_iceberg_snapshots)

    @property
    def manage(self) -> TableManagement[Table]:
        """Tags, branches, rollback and consumers of this table (on its branch):
        ``table.manage.create_tag("v1")``, ``.create_branch("dev", tag="v1")``,
        ``.fast_forward("dev")``, ``.rollback_to(tag="v1")``, ``.reset_consumer(...)``
        (``lakestore.manage``)."""
        return TableManagement(self.store, open_branch=self.on_branch, iceberg_sources=self._iceberg_sources)

    if TYPE_CHECKING:  # the plumbing that moved to ``table.store``, as type checkers see it (deprecated)

        @property
        @deprecated("use table.store.file_io")
        def file_io(self) -> FileIO: ...
        @property
        @deprecated("use table.store.metadata_path")
        def metadata_path(self) -> str: ...
        @property
        @deprecated("use table.store.schema_manager")
        def schema_manager(self) -> SchemaManager: ...
        @property
        @deprecated("use table.store.snapshot_manager")
        def snapshot_manager(self) -> SnapshotManager: ...
        @deprecated("use table.store.manifests()")
        def manifests(self) -> ManifestStore: ...
        @deprecated("use table.store.split_reader()")
        def split_reader(self, schema: TableSchema | None = None) -> SplitReader: ...
        @deprecated("use table.store.schema_at()")
        def schema_at(self, snapshot: Snapshot | None) -> TableSchema: ...
        @deprecated("use table.store.live_files()")
        def live_files(self, snapshot: Snapshot | None = None) -> list[FileInfo]: ...
        @deprecated("use table.store.delta_files()")
        def delta_files(self, snapshot: Snapshot) -> list[FileInfo]: ...
        @deprecated("use table.store.index_files()")
        def index_files(self, snapshot: Snapshot | None = None) -> list[IndexFileInfo]: ...
        @deprecated("use table.scan(...).snapshot()")
        def resolve_snapshot(
            self, snapshot_id: int | None = None, tag: str | None = None, timestamp_ms: int | None = None, watermark: int | None = None
        ) -> Snapshot | None: ...
        @deprecated("use table.scan(...).plan()")
        def plan(self, **scan: Unpack[ScanArgs]) -> list[Split]: ...

    if not TYPE_CHECKING:  # type checkers keep flagging unknown attributes (and the moved names)

        def __getattr__(self, name: str) -> Any:
            """The members that moved (``_MOVED``: 0.1 had them on ``Table``) still answer, with a
            ``DeprecationWarning`` naming the new place, for one minor release."""
            place = _MOVED.get(name)
            if place is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            warnings.warn(
                f"Table.{name} is deprecated and will be removed in the next minor release: use table.{place}",
                DeprecationWarning,
                stacklevel=2,
            )
            if name == "resolve_snapshot":
                return StoreScan(self.store).resolve_snapshot  # the latest without arguments, as 0.1
            if name == "plan":
                return lambda **scan: self.scan(**scan).plan()
            return functools.reduce(getattr, place.split("."), self)

    def latest_snapshot(self) -> Snapshot | None:
        """The latest snapshot of this branch (None: nothing committed yet).

        Raises:
            CorruptMetadataError: a snapshot file is not a valid Paimon snapshot.
            OSError: the file system failed.
        """
        return self.store.latest_snapshot()

    def snapshot(self, snapshot_id: int) -> Snapshot:
        """Snapshot ``snapshot_id`` of this branch.

        Raises:
            SnapshotNotFoundError: it does not exist (never committed, or expired).
        """
        return self.store.snapshot(snapshot_id)

    def snapshots(self) -> list[Snapshot]:
        """The retained snapshots of this branch, oldest first.

        Raises:
            CorruptMetadataError: a snapshot file is not a valid Paimon snapshot.
            OSError: the file system failed.
        """
        return self.store.snapshots()

    def find_commit(
        self, commit_user: str, commit_identifier: int, *, kind: CommitKind = "APPEND", after_id: int | None = None
    ) -> Snapshot | None:
        """The retained snapshot of a landed commit (commit user + identifier + kind), or None:
        never landed, or already expired (a tag on it outlives expiration). A writer that
        restarts asks it before writing again (exactly-once with ``commit_identifier``).
        ``after_id``: look only at the snapshots after that one (None: every retained snapshot).

        Raises:
            CorruptMetadataError: a snapshot file is not a valid Paimon snapshot.
            OSError: the file system failed.
        """
        return self.store.find_commit(commit_user, commit_identifier, kind=kind, after_id=after_id)

    # -- writing ------------------------------------------------------------------------------
    def new_write(self, *, commit_user: str | None = None, overwrite: Overwrite = None) -> TableWrite:
        """A writer for distributed or multi-batch writes; pair with ``new_commit`` of the same user.

        Args:
            commit_user: the writer's commit user (default: a fresh UUID); the committer must use
                the same one.
            overwrite: ``True`` replaces the whole table, a dict of partition values one
                partition, when the messages are committed.

        Returns:
            A ``TableWrite`` (a context manager that deletes its files when the block raises).

        Raises:
            PartitionValueError: ``overwrite`` names columns that are not partition keys.
            UnsupportedTableError: the table uses options or features lakestore cannot write.
            OptionError: an overwrite of a cross-partition upsert table.

        Example::

            with table.new_write(commit_user="job-1") as write:
                write.write_arrow(batch)
                messages = write.prepare_commit()
            table.new_commit(commit_user="job-1").commit(messages, commit_identifier=1)
        """
        partition = self._overwrite_partition(overwrite)
        base = self.latest_snapshot()
        writer = PostponeTableWrite if self.schema.bucket_mode is BucketMode.POSTPONE_MODE else TableWrite
        return writer(
            self.store.file_io,
            self.path,
            self.schema,
            self.store.manifest_store,
            base,
            commit_user=commit_user or str(uuid.uuid4()),
            overwrite_partition=partition,
            compactor_factory=functools.partial(self._bucket_compactor, base=base, overwrite=partition is not None),
            live_keys=self._live_keys,
        )

    def _live_keys(self, snapshot: Snapshot) -> Iterator[tuple[tuple[Any, ...], int, pa.Table]]:
        """The primary keys of ``snapshot``'s live rows per (partition, bucket), every level read
        (the bootstrap of a cross-partition upsert write, as Paimon's IndexBootstrap)."""
        planner = ScanPlanner(self.schema, self.store.manifest_store)
        planner.skip_level0 = False
        reader = self.store.split_reader(self.schema)
        keys = list(self.schema.primary_keys)
        for split in planner.plan(snapshot):
            yield split.partition_values, split.bucket, reader.read(split, keys, None)

    def _bucket_compactor(
        self,
        partition_values: tuple[Any, ...],
        bucket: int,
        writer: DataFileWriter,
        *,
        base: Snapshot | None = None,
        overwrite: bool = False,
    ) -> BucketCompactor:
        vectors = deletion_vectors_of(self.store.file_io, self.path, self.schema, base, partition_values=partition_values, bucket=bucket)
        if vectors is not None and overwrite:
            vectors.forget_restored()  # the overwritten files go, and their vectors with them
        return BucketCompactor(
            self.store.file_io,
            self.path,
            self.schema,
            self.store.schema_manager,
            partition_values=partition_values,
            bucket=bucket,
            writer=writer,
            deletion_vectors=vectors,
        )

    def compact(
        self, *, full: bool = False, partitions: Sequence[Mapping[str, Any]] | None = None, commit_user: str | None = None
    ) -> list[Snapshot]:
        """Compact the table (or the given partitions) and commit one COMPACT snapshot: a
        shortcut for ``table.maintenance.compact(...)`` (writers compact as part of writing, as
        Paimon's ``TableWrite.compact``).

        ``full=True`` merges every bucket into its last level; otherwise the universal picker
        decides per bucket. Postpone-bucket tables (``bucket = -2``) get Paimon's postpone
        compaction (their postponed rows assigned to real buckets).

        Args:
            full: merge each bucket into one sorted run on its last level.
            partitions: partition value dicts (or prefixes of them) to compact; None: all.
            commit_user: the commit user of the COMPACT snapshot (default: a fresh UUID).

        Returns:
            The snapshots created (empty if nothing needed compacting).

        Raises:
            UnsupportedTableError: the table uses options or features lakestore cannot compact.
            PartitionValueError: ``partitions`` names columns that are not partition keys.
            CommitConflictError: a concurrent commit removed the files being compacted.

        Example::

            table.compact(full=True, partitions=[{"dt": "2024-01-01"}])
        """
        return self.maintenance.compact(full=full, partitions=partitions, commit_user=commit_user)

    def new_commit(self, *, commit_user: str, hook: CommitHook | None = None) -> TableCommit:
        """A committer for the ``CommitMessage``s of ``new_write`` writers with the same
        ``commit_user``. Its commits run the table's post-commit maintenance.

        Args:
            commit_user: the writers' commit user (with a commit identifier, it makes commits
                idempotent).
            hook: called with the name of each step of a commit (for fault-injection tests).

        Raises:
            UnsupportedTableError: the table uses options or features lakestore cannot commit to.
        """
        return self.store.new_commit(commit_user=commit_user, hook=hook)

    def _overwrite_partition(self, overwrite: Overwrite) -> dict[str, Any] | None:
        if overwrite is None or overwrite is False:
            return None
        if overwrite is True:
            return {}
        return check_partition_spec(self.schema.partition_keys, overwrite, what="overwrite")

    def write_arrow(
        self,
        data: InputData,
        *,
        overwrite: Overwrite = None,
        commit_user: str | None = None,
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
        watermark: int | None = None,
        commit_properties: CommitProperties | None = None,
    ) -> Snapshot | None:
        """Write Arrow data in one commit; returns the new snapshot (None if nothing was written).

        ``overwrite=True`` replaces the whole table, ``overwrite={"dt": "x"}`` one partition.
        Nothing is committed and no written file is left behind if the data is rejected.

        Args:
            data: a ``pyarrow.Table``, ``RecordBatch``, ``RecordBatchReader``, an iterable of
                batches, or anything with ``__arrow_c_stream__`` (Polars, DuckDB). Columns are
                matched by name and cast to the table's types.
            overwrite: ``True`` (the whole table) or a dict of partition values (one partition).
            commit_user: the commit user (default: a fresh UUID).
            commit_identifier: with ``commit_user``, makes the commit idempotent.
            watermark: stored in the snapshot (Paimon's watermark, epoch millis).
            commit_properties: this commit's switches, e.g.
                ``CommitProperties(post_commit_hooks=False)``: no tags, expiration or Iceberg
                metadata after it (``lakestore.CommitProperties``).

        Returns:
            The last snapshot created (APPEND or OVERWRITE; a COMPACT one when the writers
            compacted), or None when nothing was written.

        Raises:
            SchemaMismatchError: missing, unknown or mistyped columns (``NullKeyError``: a null
                in a primary-key column).
            PartitionValueError: ``overwrite`` names a column that is not a partition key, or a
                row lies outside the overwritten partition.
            UnsupportedTableError: the table uses options or features lakestore cannot write.
            CommitConflictError: a concurrent commit conflicts with this one.
            CommitRetriesExhaustedError: the commit lost the race ``commit.max-retries`` times.

        Example::

            table.write_arrow(pa.table({"dt": ["2024-01-01"], "id": [1], "v": [1.0]}))
            table.write_arrow(rows_of_the_day, overwrite={"dt": "2024-01-01"})
        """
        return write_and_commit(
            self,
            lambda write: write.write_arrow(data),
            CommitId(commit_user or str(uuid.uuid4()), commit_identifier),
            overwrite=overwrite,
            watermark=watermark,
            commit_properties=commit_properties,
            # an overwrite always commits; no rows commit an empty APPEND snapshot only with
            # snapshot.ignore-empty-commit=false, as Paimon's batch writes
            commit_empty=(overwrite is not None and overwrite is not False) or self.options.get("snapshot.ignore-empty-commit") is False,
        )

    # -- row-level changes (lakestore/dml) ----------------------------------------------------
    def delete(self, filter: Predicate | None = None, *, commit_user: str | None = None) -> Snapshot | None:  # noqa: A002
        """Delete the rows ``filter`` selects (None: every row) in one commit, as Paimon's batch
        ``DELETE``: -D rows on primary-key tables, deletion vectors on append tables with
        ``deletion-vectors.enabled``; a filter on partition columns only drops those partitions.
        Returns the new snapshot (None: no row matched).

        Raises:
            SchemaMismatchError: the filter names a column the table lacks.
            UnsupportedTableError: the table cannot delete rows (its merge engine, an append table
                without deletion vectors, options lakestore cannot write).

        Example::

            table.delete(lakestore.col("dt") == "2024-01-01")  # a partition filter: drops the partition
            table.delete(lakestore.col("v") < 0.0)  # -D rows for the rows it selects
        """
        return delete_rows(self, filter, commit_user=commit_user)

    def update(
        self,
        *,
        set: Mapping[str, Any],  # noqa: A002
        filter: Predicate | None = None,  # noqa: A002
        commit_user: str | None = None,
    ) -> Snapshot | None:
        """Set columns to literal values in the rows ``filter`` selects (None: every row), in one
        commit, as Paimon's batch ``UPDATE``: +U rows on primary-key tables with merge-engine
        deduplicate or partial-update; on append tables with deletion vectors the old rows are
        marked deleted and the new ones appended. Returns the new snapshot (None: no row matched).

        Raises:
            SchemaMismatchError: an unknown column, a primary-key column, a value of the wrong type,
                or a filter on a column the table lacks (``NullKeyError``: None for a NOT NULL column).
            UnsupportedTableError: an append table without deletion vectors (or with row tracking),
                another merge engine, ``rowkind.field``.

        Example::

            table.update(set={"v": 0.0, "note": "reset"}, filter=lakestore.col("id").isin([1, 2]))
        """
        return update_rows(self, set, filter, commit_user=commit_user)

    def upsert(self, data: InputData, *, commit_user: str | None = None) -> Snapshot | None:
        """Insert or replace rows by primary key in one commit. On merge-engine partial-update
        tables ``data`` may carry some columns (the primary key among them): the others stay as
        they are. Returns the new snapshot (None: no rows).

        Raises:
            UnsupportedTableError: the table has no primary key.
            SchemaMismatchError: columns missing (other engines), unknown or of the wrong type.

        Example::

            table.upsert(pa.table({"dt": ["2024-01-01"], "id": [2], "v": [4.0]}))
        """
        return upsert_rows(self, data, commit_user=commit_user)

    def update_columns(self, data: pa.Table, *, commit_user: str | None = None) -> Snapshot | None:
        """Data-evolution tables: new values for some columns of the rows ``data`` names by
        ``_ROW_ID`` (its other columns: the ones to update), in one commit of files holding only
        those (and the partition) columns, as pypaimon's ``update_by_arrow_with_row_id`` writes
        them (``lakestore.write.update_columns``); returns the new snapshot (None: no rows).

        Raises:
            UnsupportedTableError: the table is not a data-evolution table, or uses options
                lakestore cannot write.
            SchemaMismatchError: no ``_ROW_ID`` column, unknown or partition columns, duplicate,
                null or unknown row ids.
        """
        if not self.schema.core_options().data_evolution:
            raise UnsupportedTableError(f"cannot update columns of table {self.path}: data-evolution.enabled is not true")
        self.schema.require_supported("write", table=self.path)
        if data.num_rows == 0:
            return None
        reader = self.store.split_reader()
        splits = ScanPlanner(self.schema, self.store.manifest_store).plan(self.latest_snapshot())
        pieces = [p for split in splits for p in reader.pieces(split)]
        update = write_column_updates(
            self.store.file_io, self.path, self.schema, pieces, data, lambda piece, names: reader.read_piece(piece, names, None)
        )
        committer = self.new_commit(commit_user=commit_user or str(uuid.uuid4()))
        return commit_or_abort(committer, update.messages, abort=update.abort)

    def drop_partitions(self, partitions: Sequence[Mapping[str, Any]], *, commit_user: str | None = None) -> Snapshot | None:
        """Drop whole partitions (each a dict of partition key values, or a prefix of them) in
        one OVERWRITE snapshot; their files are reclaimed when that snapshot's parent expires.
        Returns that snapshot (None: no partitions given).

        Raises:
            PartitionValueError: a spec that is empty or names columns that are not partition keys.
            UnsupportedTableError: the table uses options or features lakestore cannot write.
        """
        specs = [self._overwrite_partition(p) for p in partitions]
        if not specs:
            return None
        if any(not spec for spec in specs):
            raise PartitionValueError("drop_partitions needs partition values; use write_arrow(..., overwrite=True) to empty the table")
        user = commit_user or str(uuid.uuid4())
        snapshots = self.new_commit(commit_user=user).commit([], overwrite=[spec for spec in specs if spec])
        return snapshots[-1] if snapshots else None

    # -- reading ------------------------------------------------------------------------------
    def scan(self, **args: Unpack[ScanArgs]) -> TableScan:
        """An immutable batch read of this table (see ``to_arrow`` for the arguments); refine it
        with ``.filter()`` / ``.select()`` and run it with ``.to_arrow()``, ``.to_batches()``,
        ``.count()``, ``.to_polars()``, ...

        Example::

            scan = table.scan(tag="2024-01-01").filter(lakestore.col("id") > 10).select("id", "v")
            rows = scan.to_arrow()

        Raises:
            ValueError: more than one time-travel argument, or a negative limit.
        """
        spec = scan_spec(**args)
        return TableScan(StoreScan(self.store), spec)

    def to_arrow(self, **scan: Unpack[ScanArgs]) -> pa.Table:
        """The table's rows (merge-on-read). ``snapshot_id``, ``tag``, ``timestamp_ms`` (the last
        snapshot committed by then) or ``watermark`` (the first snapshot whose watermark reached
        it, Paimon's ``scan.watermark``) travel back in time, reading with the schema that
        snapshot was written with. ``limit``: at most this many rows (the first ones in read
        order); reading stops once they are there.

        ``incremental_between`` (``"5,10"`` or ``(5, 10)``: snapshot ids, or two tag names) or
        ``incremental_between_timestamp`` (epoch millis) read what Paimon's batch read with
        ``incremental-between`` / ``incremental-between-timestamp`` returns: with
        ``incremental_scan_mode`` ``"auto"`` (default), ``"delta"`` or ``"changelog"`` every row
        of the data (changelog) files committed in snapshots ``start + 1 .. end``, unmerged and
        whatever its row kind; with ``"diff"`` (and between two tags) the rows of the end
        snapshot that differ from the start snapshot's (``lakestore.scan.incremental``). The
        table's own ``scan.*`` and ``incremental-between*`` options are honoured the same way
        when no such argument is given. A shortcut for ``table.scan(...).to_arrow()``.

        Raises:
            SchemaMismatchError: a selected or filtered column does not exist.
            SnapshotNotFoundError: the time-travel target does not exist.
            TagNotFoundError: the named tag does not exist.
            UnsupportedTableError: the table uses a Paimon feature lakestore cannot read.
            ValueError: time travel and an incremental range given together.

        Example::

            table.to_arrow(columns=["id", "v"], filter=lakestore.col("dt") == "2024-01-01")
            table.to_arrow(tag="2024-01-01")  # time travel
            table.to_arrow(incremental_between=(5, 10))  # what snapshots 6 .. 10 added
        """
        return self.scan(**scan).to_arrow()

    def to_batches(self, *, batch_size: int | None = None, **scan: Unpack[ScanArgs]) -> Iterator[pa.RecordBatch]:
        """The rows of ``to_arrow`` (same arguments, same rows in the same order) as record
        batches, read split by split: memory holds a few splits' (or data files') rows at a
        time, whatever the table's size. ``batch_size``: at most this many rows per batch.
        A shortcut for ``table.scan(**scan).to_batches()``.

        Raises:
            SchemaMismatchError: a selected or filtered column does not exist.
            SnapshotNotFoundError: the time-travel target does not exist.
            TagNotFoundError: the named tag does not exist.
            UnsupportedTableError: the table uses a Paimon feature lakestore cannot read.
            ValueError: time travel and an incremental range given together.
        """
        return self.scan(**scan).to_batches(batch_size=batch_size)

    def to_arrow_batch_reader(self, *, batch_size: int | None = None, **scan: Unpack[ScanArgs]) -> pa.RecordBatchReader:
        """``to_batches`` as a ``pyarrow.RecordBatchReader`` (for DuckDB, Polars, IPC writers).
        A shortcut for ``table.scan(**scan).to_arrow_batch_reader()``.

        Raises:
            SchemaMismatchError: a selected or filtered column does not exist.
            SnapshotNotFoundError: the time-travel target does not exist.
            TagNotFoundError: the named tag does not exist.
            UnsupportedTableError: the table uses a Paimon feature lakestore cannot read.
            ValueError: time travel and an incremental range given together.
        """
        return self.scan(**scan).to_arrow_batch_reader(batch_size=batch_size)

    def to_pandas(self, **scan: Unpack[ScanArgs]) -> pd.DataFrame:
        """The rows of ``table.scan(**scan)`` as a pandas DataFrame.

        Raises:
            ImportError: pandas is not installed (and whatever ``to_arrow`` raises).
        """
        return self.scan(**scan).to_pandas()

    def to_polars(self, **scan: Unpack[ScanArgs]) -> pl.DataFrame:
        """The rows of ``table.scan(**scan)`` as a Polars DataFrame (needs polars).

        Raises:
            ImportError: polars is not installed (and whatever ``to_arrow`` raises).
        """
        return cast("pl.DataFrame", self.scan(**scan).to_polars())

    def to_duckdb(self, connection: Any = None, *, name: str | None = None, **scan: Unpack[ScanArgs]) -> Any:
        """Register the rows of ``table.scan(**scan)`` in DuckDB (needs duckdb) and return the relation.

        Raises:
            ImportError: duckdb is not installed (and whatever ``to_arrow`` raises).
        """
        return self.scan(**scan).to_duckdb(connection, name=name)

    # -- reads over time ----------------------------------------------------------------------
    def _change_reader(self, schema: TableSchema | None = None) -> ChangeReader:
        self.schema.require_supported("read", table=self.path)
        schema = schema or self.schema
        return ChangeReader(schema, self.store.snapshot_manager, self.store.manifest_store, self.store.split_reader(schema))

    def read_changes(self, *, from_snapshot_id: int, to_snapshot_id: int | None = None, columns: Sequence[str] | None = None) -> pa.Table:
        """Changes committed in snapshots ``from_snapshot_id + 1 .. to_snapshot_id`` (default:
        latest), with a ``_row_kind`` column ("+I", "-U", "+U", "-D"). From the changelog files
        when the table has a changelog producer, else from each APPEND snapshot's delta. With
        ``to_snapshot_id`` the changes read with that snapshot's schema, as a time-travel read.

        Raises:
            SnapshotNotFoundError: a snapshot in the range has expired.
            SchemaMismatchError: a selected column does not exist.
            UnsupportedTableError: the table uses features lakestore cannot read.
        """
        schema, end = self.schema, to_snapshot_id
        if end is None:
            end = self.store.snapshot_manager.latest_id() or 0
        elif self.store.snapshot_manager.exists(end):
            schema = self.store.schema_at(self.store.snapshot_manager.get(end))
        return self._change_reader(schema).changes_between(from_snapshot_id, end, select_columns(schema, columns))

    def stream(
        self,
        *,
        start: StreamStart = "full",
        snapshot_id: int | None = None,
        timestamp_ms: int | None = None,
        consumer_id: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> StreamScan:
        """A streaming scan: the full table first (``start="full"``; or ``"latest"``, a
        ``snapshot_id`` or ``timestamp_ms`` to start from), then each new snapshot's changes.
        With ``consumer_id`` the position is stored in the table at every ``checkpoint()``,
        resumed on restart, and protects the snapshots it still needs from expiration.
        A stream reads every snapshot with the table's current schema. On a table whose
        changelog comes from compaction (``lookup``, ``full-compaction``) the full phase reads
        only the compacted files, as Paimon's streaming reads: the rows committed since arrive
        with the changelog of the compaction that moves them up.

        Returns:
            A ``StreamScan``: iterate it (or call ``poll()``) for Arrow tables with a
            ``_row_kind`` column; ``checkpoint()`` stores the consumer's position.

        Raises:
            UnsupportedTableError: the table has ``scan.*`` options that steer Paimon's streaming
                reads, or uses features lakestore cannot read.
            SchemaMismatchError: a selected column does not exist.
            ValueError: ``start`` is neither ``"full"`` nor ``"latest"``.

        Example::

            stream = table.stream(consumer_id="mart")
            for changes in stream:
                ...
            stream.checkpoint()
        """
        scan_keys = [k for k in _SCAN_OPTION_KEYS if k in self.schema.options]
        if set(scan_keys) - {"scan.mode"} or self.schema.options.get("scan.mode", "default").strip().lower() != "default":
            raise UnsupportedTableError(
                f"cannot stream table {self.path}: its options {', '.join(scan_keys)} steer Paimon's streaming reads,"
                " which lakestore's streams do not follow (they are honoured by batch reads only)",
                options=tuple(scan_keys),
            )
        store, selected = self.store, select_columns(self.schema, columns)
        full = self.schema.arrow_schema()
        output = pa.schema([full.field(c) for c in selected])
        return StreamScan(
            self._change_reader(),
            ConsumerManager(self.store.file_io, self.store.metadata_path),
            columns=selected,
            # the full phase: the snapshot's files on the levels the stream asks for (of a table
            # whose changelog comes from compaction, the compacted ones, as Paimon's streaming reads)
            full_reader=lambda sid, levels: store.split_reader().read_all(
                ScanPlanner(self.schema, store.manifest_store).plan(store.snapshot(sid), levels=levels), selected, None, output
            ),
            start=start,
            snapshot_id=snapshot_id,
            timestamp_ms=timestamp_ms,
            consumer_id=consumer_id,
        )

    # -- lifecycle ----------------------------------------------------------------------------
    # The policy every commit runs. Expiration, orphan cleanup, tags, branches and rollback are
    # ``table.maintenance`` and ``table.manage`` (lakestore/maintenance.py, lakestore/manage.py).
    def _commit_callbacks(self) -> tuple[CommitCallback, ...]:
        """The work every commit of this table runs after it landed (``lakestore.lifecycle.callbacks``:
        Iceberg metadata, automatic tags, partition and snapshot expiration); a table of a
        catalog may add its own (the Hive catalog's partition sync)."""
        return table_callbacks(self)

    def _expire_iceberg_snapshots(self) -> None:
        """The latest Iceberg metadata forgets the expired snapshots (whose files may be gone)."""
        expire_iceberg_snapshots(self.store)

    def _iceberg_sources(self) -> IcebergSources | None:
        """The table's pieces the Iceberg metadata is generated from (None: no Iceberg metadata)."""
        return iceberg_sources(self.store)

    # -- branches -----------------------------------------------------------------------------
    def on_branch(self, name: str) -> Table:
        """The same table on branch ``name`` (``"main"`` for the main branch).

        Raises:
            TableNotFoundError: the branch does not exist.
        """
        store = self.store
        return Table(self.path, file_io=store.file_io, identifier=self.identifier, branch=name, snapshot_commit=store.snapshot_commit)
