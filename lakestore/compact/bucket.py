"""A bucket's compaction (Paimon's MergeTreeCompactManager / AppendCompactManager for one
(partition, bucket)): used by writers, which compact as they write, and by whole-table compaction."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.compact.append import compact_append, pick_append_files
from lakestore.compact.batches import read_batches
from lakestore.compact.deletion_vectors import (
    DeletionVectorsMaintainer,
    LookupResult,
    apply_compaction,
    lookup_older_versions,
    vectors_of,
    with_positions,
)
from lakestore.compact.levels import Levels
from lakestore.compact.output import SortedRunWriter
from lakestore.compact.record_expire import RecordLevelExpire
from lakestore.compact.row_tracking import compact_row_tracking
from lakestore.compact.slices import BATCH_ROWS, SLICE_BYTES, key_slices
from lakestore.compact.task import MergeTreeCompactTask
from lakestore.compact.universal import UniversalCompaction, pick_force_up_level0, pick_full_compaction
from lakestore.errors import CommitConflictError, DataFileMissingError
from lakestore.format.arrow_ops import from_numpy, rows_with_keys_in, sort_indices
from lakestore.format.binary_row import decode_row, encode_values
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.format.partition_path import partition_path
from lakestore.io.factory import io_for
from lakestore.io.fileio import FileIO
from lakestore.merge import create_merge_engine, drop_retracts
from lakestore.merge.changelog import diff_changelog
from lakestore.merge.lookup import uses_lookup_merge, with_level
from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.commit_message import CompactResult
from lakestore.meta.index_manifest import IndexFileMeta
from lakestore.meta.manifest import FILE_SOURCE_APPEND, DataFileMeta
from lakestore.meta.schema import SchemaManager, TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.read.data_evolution import ROW_TRACKING_COLUMNS, tracking_columns
from lakestore.read.deletion_vectors import apply_vector
from lakestore.read.parquet_read import read_data_file
from lakestore.read.schema_evolution import read_as_schema
from lakestore.write.file_writer import DataFileWriter, FileTarget

SMALL_FILE_RATIO = 0.7  # Paimon rewrites files below 70% of target-file-size


class BucketCompactor:
    """Compacts the files of one (partition, bucket)."""

    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        schema: TableSchema,
        schemas: SchemaManager,
        *,
        partition_values: tuple[Any, ...],
        bucket: int,
        writer: DataFileWriter | None = None,
        deletion_vectors: DeletionVectorsMaintainer | None = None,
    ) -> None:
        self.file_io = file_io
        self.schema = schema
        self.schemas = schemas
        self.options = schema.core_options()
        types = schema.types_of(schema.partition_keys)
        path = partition_path(schema.partition_keys, types, partition_values, default_name=self.options.partition_default_name)
        self.writer = writer or DataFileWriter(file_io, schema, FileTarget(table_path, path, bucket))
        self.paths = self.writer.paths
        self.changelog_writer = DataFileWriter(file_io, schema, self.writer.target, prefix="changelog")
        self.primary_key = bool(schema.primary_keys)
        self.merge_engine = create_merge_engine(schema) if self.primary_key else None
        # record-level.expire-time (primary-key tables, as Paimon's KeyValueFileStoreWrite)
        self.record_expire = RecordLevelExpire.of(schema, schemas) if self.primary_key else None
        self.deletion_vectors = deletion_vectors
        # Paimon's LookupMergeFunction: merges take a key's level-0 records and its record at the
        # lowest level >= 1, so a level-0 record written above older levels folds their version in
        self.lookup_merge = self.primary_key and uses_lookup_merge(self.options)
        self.picker = UniversalCompaction(
            max_size_amplification_percent=self.options.compaction_max_size_amplification_percent,
            size_ratio=self.options.compaction_size_ratio,
            num_run_compaction_trigger=self.options.compaction_trigger,
            total_size_threshold=self.options.get("compaction.total-size-threshold"),
        )
        self.force_rewrite_all = bool(self.options.get("compaction.force-rewrite-all-files"))

    def _located(self, f: DataFileMeta) -> tuple[FileIO, str]:
        """The FileIO and path of an input file (in the bucket directory or at its external path)."""
        path = self.paths.to_path(f)
        return io_for(self.file_io, path, self.schema.options), path

    def read_file(self, f: DataFileMeta, *, vectors: Mapping[str, np.ndarray] | None = None) -> pa.Table:
        """A file's rows; on deletion-vector tables without the deleted ones (``vectors``: as of an
        earlier state of the maintainer)."""
        if self.deletion_vectors is None:
            return self._read_whole(f)
        return apply_vector(self._read_whole(f), vectors_of(self.deletion_vectors, vectors, f.file_name))

    def read_batches(self, f: DataFileMeta) -> Iterator[pa.Table]:
        """A primary-key file's rows batch by batch, without the deleted ones (compaction inputs)."""
        return self._batches(f, None)

    def _batches(self, f: DataFileMeta, vectors: Mapping[str, np.ndarray] | None) -> Iterator[pa.Table]:
        columns = self.schema.field_names + [SEQUENCE_NUMBER, VALUE_KIND]
        deleted = vectors_of(self.deletion_vectors, vectors, f.file_name) if self.deletion_vectors is not None else None
        batches = read_batches(*self._located(f), f, self.schema, self.schemas, columns, batch_rows=BATCH_ROWS, deleted=deleted)
        try:
            yield from batches
        except DataFileMissingError as exc:
            raise CommitConflictError(f"compaction input {f.file_name} was removed concurrently; plan again") from exc

    def _read_positioned(self, f: DataFileMeta) -> pa.Table:
        keys = self._read_whole(f, self.schema.trimmed_primary_keys)
        return with_positions(keys, vectors_of(self.deletion_vectors, None, f.file_name))

    def _read_whole(self, f: DataFileMeta, columns: Sequence[str] | None = None) -> pa.Table:
        if columns is None:
            columns = self.schema.field_names + ([SEQUENCE_NUMBER, VALUE_KIND] if self.primary_key else [])
        try:
            return read_as_schema(*self._located(f), f, self.schema, self.schemas, columns)
        except DataFileMissingError as exc:
            # A concurrent expiration removed a file of the snapshot this compaction planned
            # from: the plan is stale, which is a conflict, not corruption.
            raise CommitConflictError(f"compaction input {f.file_name} was removed concurrently; plan again") from exc

    def sorted_run_count(self, files: Sequence[DataFileMeta]) -> int:
        return Levels.of(files, self.options.num_levels).number_of_sorted_runs

    def compact(self, files: Sequence[DataFileMeta], *, full: bool) -> CompactResult:
        min_size = int(self.options.target_file_size * SMALL_FILE_RATIO)
        if not self.primary_key:
            return self._compact_append(files, full=full, min_size=min_size)
        levels = Levels.of(files, self.options.num_levels)
        runs = levels.sorted_runs()
        dv = self.deletion_vectors
        if full:
            has_vector = (lambda f: dv.vector(f.file_name) is not None) if dv is not None else None
            expired = self.record_expire.holds_expired if self.record_expire is not None else None
            unit = pick_full_compaction(
                levels.num_levels, runs, force_rewrite_all=self.force_rewrite_all, has_vector=has_vector, expired=expired
            )
            if unit is None or not unit.files:
                return CompactResult()
        else:
            if self.schema.reads_skip_level0 or dv is not None:
                unit = pick_force_up_level0(self.picker, levels.num_levels, runs)
            else:
                unit = self.picker.pick(levels.num_levels, runs)
            if unit is None or not unit.files or (len(unit.files) == 1 and unit.files[0].level == unit.output_level):
                return CompactResult()
        assert self.merge_engine is not None
        lookup = LookupResult({}, None)
        before_vectors = dv.current() if dv is not None else None
        # lookup tables fold the older version of a level-0 key into its new record (deletion-vector
        # tables also mark that version deleted)
        folds = dv is not None or (self.lookup_merge and self._needs_old_values())
        if folds:
            lookup = self._lookup(files, unit.files, unit.output_level)
        task = MergeTreeCompactTask(
            output_level=unit.output_level,
            max_level=levels.max_level,
            # with deletion vectors no older version survives above the output: deletes can go
            drop_delete=unit.output_level != 0 and (unit.output_level >= levels.non_empty_highest_level() or dv is not None),
            min_file_size=min_size,
            key_names=self.schema.trimmed_primary_keys,
            key_types=self.schema.types_of(self.schema.trimmed_primary_keys),
            sequence_fields=self.options.sequence_fields,
            merge_engine=self.merge_engine,
            read_file=self.read_file,
            read_batches=self.read_batches,
            slice_bytes=SLICE_BYTES,
            writer=self.writer,
            older_rows=(lambda rows: lookup.older_rows(rows, self.schema.trimmed_primary_keys)) if folds else None,
            must_rewrite=self._must_rewrite(unit.output_level, levels.max_level) if folds else None,
            lookup_merge=self.lookup_merge,
            force_rewrite_all=self.force_rewrite_all,
            record_expire=self.record_expire,
        )
        result = task.rewrite_files(unit.files) if unit.file_rewrite else task.run(unit.files)
        if self.options.changelog_producer == "full-compaction" and unit.output_level == levels.max_level:
            result.changelog += self._full_compaction_changelog(files, result, levels.max_level, before_vectors)
        if dv is not None:
            apply_compaction(dv, result, lookup)
        return result

    def _compact_append(self, files: Sequence[DataFileMeta], *, full: bool, min_size: int) -> CompactResult:
        """Append tables: small files concatenated in sequence order; with
        ``compaction.force-rewrite-all-files`` a full compaction of a fixed bucket rewrites every
        file (Paimon's BucketedAppendCompactManager; bucket-unaware tables compact through its
        AppendCompactCoordinator, which ignores the option). A bucket-unaware table is planned in
        chunks of ``compaction.file-num-limit`` files in scan order (the coordinator scans that
        many files per plan)."""
        unaware = self.schema.bucket_mode is BucketMode.BUCKET_UNAWARE
        force = full and self.force_rewrite_all and not unaware
        chunks: list[Sequence[DataFileMeta]] = [files]
        if unaware:
            limit = self.options.get("compaction.file-num-limit")
            chunks = [files[i : i + limit] for i in range(0, len(files), limit)]
        dv = self.deletion_vectors
        deleted_rows = None
        if dv is not None and unaware:  # compaction.delete-ratio-threshold (AppendCompactCoordinator only)

            def deleted_rows(f: DataFileMeta) -> int | None:
                vector = dv.vector(f.file_name)
                return None if vector is None else len(vector)

        result = CompactResult()
        for chunk in chunks:
            picked = pick_append_files(
                chunk,
                small_file_size=min_size,
                min_file_num=self.options.compaction_min_file_num,
                max_file_num=self.options.compaction_max_file_num,
                full=full,
                force_rewrite_all=force,
                deleted_rows=deleted_rows,
                delete_ratio_threshold=self.options.get("compaction.delete-ratio-threshold"),
            )
            if self.options.row_tracking:  # keep each row's _ROW_ID and _SEQUENCE_NUMBER (lakestore.compact.row_tracking)
                done = compact_row_tracking(picked, read_file=self._read_tracked, writer=self.writer, rewrite_single=force)
            else:
                done = compact_append(picked, read_file=self.read_file, writer=self.writer, rewrite_single=force)
            result.before.extend(done.before)
            result.after.extend(done.after)
        if dv is not None:
            for f in result.before:  # their deleted rows were left out of the new files
                dv.remove(f.file_name)
        return result

    def _read_tracked(self, f: DataFileMeta) -> pa.Table:
        """An append file's rows with their ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (row-tracking tables)."""
        rows = self.read_file(f)

        def physical(g: DataFileMeta, names: Sequence[str]) -> pa.Table:
            file_io, path = self._located(g)
            return read_data_file(file_io, path, list(names))[0]

        for name, column in zip(ROW_TRACKING_COLUMNS, tracking_columns(f, ROW_TRACKING_COLUMNS, physical, source=f.file_name), strict=True):
            rows = rows.append_column(name, column)
        return rows

    def _needs_old_values(self) -> bool:
        """Whether a key's new row depends on its older version (Paimon persists looked-up
        values for these engines)."""
        return self.options.merge_engine != "deduplicate" or bool(self.options.sequence_fields)

    def _lookup(self, files: Sequence[DataFileMeta], unit_files: Sequence[DataFileMeta], output_level: int) -> LookupResult:
        in_unit = {(f.file_name, f.level) for f in unit_files}
        level0 = [f for f in unit_files if f.level == 0]
        others = [f for f in files if (f.file_name, f.level) not in in_unit]
        if self.deletion_vectors is None:
            # Paimon looks a key up from the output level + 1 on (newer level-0 files left out
            # of the unit are no older version)
            others = [f for f in others if f.level > output_level]
        if level0 and others:
            # only files whose key range meets the level-0 keys' can hold older versions
            types = self.schema.types_of(self.schema.trimmed_primary_keys)
            low = min(decode_row(f.min_key, types, source=f.file_name) for f in level0)
            high = max(decode_row(f.max_key, types, source=f.file_name) for f in level0)
            others = [
                f
                for f in others
                if decode_row(f.min_key, types, source=f.file_name) <= high and decode_row(f.max_key, types, source=f.file_name) >= low
            ]
        read_whole = (lambda f: with_level(self._read_whole(f), f.level)) if self.lookup_merge else self._read_whole
        return lookup_older_versions(
            level0,
            others,
            read_positioned=self._read_positioned,
            read_whole=read_whole,
            key_names=self.schema.trimmed_primary_keys,
            keep_rows=self._needs_old_values(),
        )

    def _must_rewrite(self, output_level: int, max_level: int) -> Callable[[DataFileMeta], bool]:
        """Paimon's upgrade strategy for level-0 files of deletion-vector tables: rewrite when
        the file holds deletes, or when its rows must absorb older values above the output."""
        merges = self._needs_old_values() and output_level != max_level

        dv = self.deletion_vectors is not None

        def must(f: DataFileMeta) -> bool:
            # (deletes must go only where vectors stand for them)
            return f.level == 0 and ((dv and (f.delete_row_count is None or f.delete_row_count > 0)) or merges)

        return must

    def write_index(self) -> tuple[tuple[IndexFileMeta, ...], tuple[IndexFileMeta, ...]]:
        """The bucket's new deletion-vector index file and the ones it replaces, if changed."""
        return self.deletion_vectors.write_index() if self.deletion_vectors is not None else ((), ())

    def _full_compaction_changelog(
        self, files: Sequence[DataFileMeta], result: CompactResult, max_level: int, before_vectors: Mapping[str, np.ndarray] | None = None
    ) -> list[DataFileMeta]:
        """Diff of the top level before and after a full compaction (Paimon's full-compaction
        changelog producer), key range by key range: the two runs are read in slices together."""
        assert self.merge_engine is not None
        removed = {(f.file_name, f.level) for f in result.before}
        old_top = [f for f in files if f.level == max_level]
        new_top = [f for f in files if f.level == max_level and (f.file_name, f.level) not in removed] + [
            f for f in result.after if f.level == max_level
        ]
        keys = list(self.schema.trimmed_primary_keys)
        values = [f.name for f in self.schema.fields if f.name not in self.schema.primary_keys]

        def batches(side: _Side) -> Iterator[pa.Table]:
            for rows in self._batches(side.file, None if side.after else before_vectors):
                yield rows.append_column(_AFTER, from_numpy(np.full(rows.num_rows, side.after)))

        sides = [_Side(f, False) for f in old_top] + [_Side(f, True) for f in new_top]
        # keys a record below the top level reached: they change (-U/+U) even to equal values,
        # unless changelog-producer.row-deduplicate; the other top-level keys did not change
        lower = [f for f in result.before if f.level < max_level]
        lower_keys = pa.concat_tables([self.read_file(f).select(keys) for f in lower], promote_options="permissive") if lower else None
        row_deduplicate = self.options.changelog_row_deduplicate
        output = SortedRunWriter(self.changelog_writer, level=0, file_source=FILE_SOURCE_APPEND)
        try:
            for rows in key_slices(sides, batches, keys, slice_bytes=SLICE_BYTES):
                after = rows.column(_AFTER)
                before_rows, after_rows = self._top_level(rows.filter(pc.invert(after))), self._top_level(rows.filter(after))
                if self.record_expire is not None:  # Paimon's top-level records are read with the expiry filter
                    before_rows = self.record_expire.keep(before_rows)
                touched = (
                    rows_with_keys_in(before_rows, lower_keys, keys)
                    if lower_keys is not None
                    else np.zeros(before_rows.num_rows, dtype=bool)
                )
                output.write(diff_changelog(before_rows, after_rows, keys, values, row_deduplicate=row_deduplicate, touched=touched))
        except BaseException:
            output.abort()
            raise
        return output.finish()

    def _top_level(self, rows: pa.Table) -> pa.Table:
        rows = rows.drop_columns([_AFTER])
        return drop_retracts(rows.take(sort_indices(rows, self.schema.trimmed_primary_keys)))


@dataclass(frozen=True)
class _Side:
    """A top-level file before (``after`` False) or after a full compaction."""

    file: DataFileMeta
    after: bool

    @property
    def file_size(self) -> int:
        return self.file.file_size


_AFTER = "_AFTER_COMPACTION"  # which side of the diff a row is on


def deletion_vectors_of(
    file_io: FileIO, table_path: str, schema: TableSchema, snapshot: Snapshot | None, *, partition_values: tuple[Any, ...], bucket: int
) -> DeletionVectorsMaintainer | None:
    """The vectors of one bucket as of ``snapshot``, for writers and compactions of primary-key
    tables with ``deletion-vectors.enabled`` (None for other tables)."""
    if not schema.primary_keys or not schema.core_options().deletion_vectors:
        return None
    partition = encode_values(schema.types_of(schema.partition_keys), partition_values)
    return DeletionVectorsMaintainer.restore(file_io, table_path, snapshot, partition=partition, bucket=bucket)
