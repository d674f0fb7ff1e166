"""Reading splits: raw concatenation when Paimon's rule allows, else merge-on-read of the sorted
runs with the table's merge engine.

A split is read in pieces: one per data file where the files' rows are final (append tables,
raw-convertible splits), the whole split where runs merge or deletion vectors apply. Pieces are
read in parallel threads (Arrow and NumPy release the GIL); streaming keeps only a few pieces in
memory at a time."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import as_numpy, group_last, group_starts, indices, sort_indices, sort_order
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.io.factory import io_for
from lakestore.io.fileio import FileIO
from lakestore.merge import create_merge_engine, drop_retracts
from lakestore.merge.lookup import LEVEL, lookup_versions, uses_lookup_merge, with_level
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.paths import TablePaths
from lakestore.meta.schema import SchemaManager, TableSchema
from lakestore.read.data_evolution import ROW_TRACKING_COLUMNS, ROW_TRACKING_FIELDS, read_group, row_id_groups, tracking_columns
from lakestore.read.deletion_vectors import apply_vector, read_vectors
from lakestore.read.parquet_read import ReadCounters, read_data_file
from lakestore.read.planner import Split
from lakestore.read.predicate import Predicate, apply_filter, restrict
from lakestore.read.schema_evolution import read_as_schema

# Partition column types filled from the split's partition values instead of read from every
# file (the value is the same on every row of a split, and decoding it costs as much as a column).
_CONSTANT_TYPES = (pa.types.is_integer, pa.types.is_string)


@dataclass(frozen=True)
class Piece:
    """A unit of reading: one data file of a split whose rows are final, or (``file`` None) the
    whole split."""

    split: Split
    file: DataFileMeta | None = None


class SplitReader:
    def __init__(self, file_io: FileIO, table_path: str, schema: TableSchema, schemas: SchemaManager) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.schema = schema
        self.schemas = schemas
        self.options = schema.core_options()
        self.paths = TablePaths.of(table_path, schema)
        self.primary_key = bool(schema.primary_keys)
        self.deletion_vectors = self.options.deletion_vectors
        # row tracking: _ROW_ID / _SEQUENCE_NUMBER on request; data evolution: files sharing a
        # row-id range merged column-wise (lakestore/read/data_evolution.py)
        self.row_tracking = self.options.row_tracking and not schema.primary_keys
        self.data_evolution = self.row_tracking and self.options.data_evolution
        self.merge_engine = create_merge_engine(schema) if self.primary_key else None
        # Paimon's LookupMergeFunction: a key's level-0 records and its record at the lowest level >= 1
        self._lookup_merge = self.primary_key and uses_lookup_merge(self.options)
        self.key_names = list(schema.trimmed_primary_keys)
        self.sequence_fields = list(self.options.sequence_fields)
        self.partition_types = schema.types_of(schema.partition_keys)
        # Filters on these columns are exact per file: every version of a key shares them.
        self._key_and_partition = set(schema.primary_keys) | set(schema.partition_keys)
        self._row_count_column = next(f.name for f in schema.fields if f.name not in schema.partition_keys)
        # Engines that keep one input row per key need neither _SEQUENCE_NUMBER (files are read
        # oldest first) nor the full sort of all columns.
        empty = np.zeros(0, dtype=np.int64)
        self._single_row = self.merge_engine is not None and self.merge_engine.pick(empty, empty) is not None
        arrow = schema.arrow_schema()
        self._constants = {
            name: (i, arrow.field(name).type)
            for i, name in enumerate(schema.partition_keys)
            if name not in self.sequence_fields and any(check(arrow.field(name).type) for check in _CONSTANT_TYPES)
        }
        self.counters = ReadCounters()
        # Paimon's forceKeepDelete ($audit_log): primary-key reads keep merged retractions and
        # return each row's ``_VALUE_KIND`` after the requested columns.
        self.keep_retracts = False

    def file_path(self, partition_values: tuple[Any, ...], bucket: int, f: DataFileMeta) -> str:
        if f.external_path:
            return f.external_path
        return self.paths.file_path(self.paths.partition_path(partition_values), bucket, f)

    def io_of(self, path: str) -> FileIO:
        """The FileIO of a data file (external paths may sit on another file system)."""
        return io_for(self.file_io, path, self.schema.options)

    def read_file(
        self, partition_values: tuple[Any, ...], bucket: int, f: DataFileMeta, columns: Sequence[str], *, system: bool
    ) -> pa.Table:
        """One data or changelog file as the current schema (plus ``_SEQUENCE_NUMBER`` and
        ``_VALUE_KIND`` when ``system``)."""
        wanted = list(columns) + ([SEQUENCE_NUMBER, VALUE_KIND] if system else [])
        path = self.file_path(partition_values, bucket, f)
        return read_as_schema(
            self.io_of(path),
            path,
            f,
            self.schema,
            self.schemas,
            wanted,
            counters=self.counters,
        )

    def _read_file(
        self,
        split: Split,
        f: DataFileMeta,
        columns: Sequence[str],
        system: Sequence[str],
        *,
        prune: Predicate | None = None,
        row_limit: int | None = None,
    ) -> pa.Table:
        path = self.file_path(split.partition_values, split.bucket, f)
        wanted = list(columns) + list(system)
        return read_as_schema(
            self.io_of(path), path, f, self.schema, self.schemas, wanted, predicate=prune, row_limit=row_limit, counters=self.counters
        )

    # -- pieces -------------------------------------------------------------------------------
    def pieces(self, split: Split) -> list[Piece]:
        if self.data_evolution:
            # one piece per group of files sharing a row-id range (read together, merged)
            return [Piece(replace(split, files=tuple(group))) for group in row_id_groups(split.files, source=self.table_path)]
        if self.deletion_vectors or (self.primary_key and not split.raw_convertible):
            return [Piece(split)]
        return [Piece(split, f) for f in split.files]

    def read(self, split: Split, columns: Sequence[str], predicate: Predicate | None) -> pa.Table:
        """Rows of one split restricted to ``columns`` (in that order) and filtered exactly."""
        return _concat([self.read_piece(p, columns, predicate) for p in self.pieces(split)])

    def read_piece(self, piece: Piece, columns: Sequence[str], predicate: Predicate | None, *, limit: int | None = None) -> pa.Table:
        """Rows of one piece restricted to ``columns`` and filtered exactly. ``limit``: the caller
        needs at most this many rows (a file may stop reading row groups once it has them)."""
        split = piece.split
        kinds = self.keep_retracts and self.primary_key
        needed = list(dict.fromkeys(list(columns) + sorted(predicate.columns() if predicate else [])))
        # Partition columns filled from the split's values are not read; a read of those alone
        # still reads one column, which carries the row count.
        tracking = [c for c in needed if c in ROW_TRACKING_COLUMNS] if self.row_tracking else []
        to_read = [c for c in needed if c not in self._constants and c not in tracking] or [self._row_count_column]
        if self.data_evolution:
            table = self._read_evolved(split, [c for c in needed if c not in self._constants and c not in tracking], tracking)
        elif piece.file is not None:
            # Rows are final: row groups are pruned by the predicate itself, retractions dropped
            # (not when row ids are wanted: they are positions in the file).
            clean = (not self.primary_key or piece.file.delete_row_count == 0) and not kinds
            row_limit = limit if clean and predicate is None and not tracking else None
            prune = None if tracking else predicate
            table = self._read_file(split, piece.file, to_read, [] if clean else [VALUE_KIND], prune=prune, row_limit=row_limit)
            table = self._with_tracking(split, piece.file, table, tracking)
            if not clean and not kinds:
                table = drop_retracts(table)
        elif self.deletion_vectors:
            table = self._read_with_vectors(split, to_read, tracking)
        else:
            table = self._merge(split, to_read, predicate)
        table = self._with_constants(table, split, needed)
        table = apply_filter(table, predicate)
        return table.select(list(columns) + ([VALUE_KIND] if kinds else []))

    def _with_constants(self, table: pa.Table, split: Split, names: Sequence[str]) -> pa.Table:
        missing = [n for n in names if n in self._constants and n not in table.column_names]
        for name in missing:
            index, arrow_type = self._constants[name]
            value = split.partition_values[index]
            column = pa.nulls(table.num_rows, arrow_type) if value is None else _repeat(value, arrow_type, table.num_rows)
            table = table.append_column(pa.field(name, arrow_type), column)
        return table

    def _read_physical(self, split: Split, f: DataFileMeta, names: Sequence[str]) -> pa.Table:
        """Physical columns of a data file as stored (its row-tracking columns)."""
        path = self.file_path(split.partition_values, split.bucket, f)
        table, _ = read_data_file(self.io_of(path), path, list(names), counters=self.counters)
        return table

    def _with_tracking(self, split: Split, f: DataFileMeta, table: pa.Table, tracking: Sequence[str]) -> pa.Table:
        """``table`` (every row of file ``f``, in file order) with the row-tracking columns."""
        if not tracking:
            return table
        arrays = tracking_columns(f, tracking, lambda g, names: self._read_physical(split, g, names), source=self.table_path)
        for name, array in zip(tracking, arrays, strict=True):
            table = table.append_column(ROW_TRACKING_FIELDS[name], array)
        return table

    def _read_evolved(self, split: Split, columns: Sequence[str], tracking: Sequence[str]) -> pa.Table:
        """One row-id group of a data-evolution table, merged column-wise (newest file first)."""
        parts = [
            read_group(
                group,
                columns,
                tracking,
                self.schema,
                self.schemas,
                lambda f, names: self._read_file(split, f, names, []),
                lambda f, names: self._read_physical(split, f, names),
                source=self.table_path,
            )
            for group in row_id_groups(split.files, source=self.table_path)
        ]
        return _concat(parts)

    def _read_with_vectors(self, split: Split, columns: Sequence[str], tracking: Sequence[str] = ()) -> pa.Table:
        # No merge (Paimon's ApplyDeletionVectorReader): vectors leave one live row per key.
        # Vectors hold row positions: each file must be read whole (no row-group pruning).
        vectors = read_vectors(self.file_io, self.table_path, dict(split.deletion_files))
        # Append files carry no row kinds: every row is +I, also for the audit log.
        clean = not self.primary_key or (all(f.delete_row_count == 0 for f in split.files) and not self.keep_retracts)
        system = [] if clean else [VALUE_KIND]
        parts = [
            apply_vector(self._with_tracking(split, f, self._read_file(split, f, columns, system), tracking), vectors.get(f.file_name))
            for f in split.files
        ]
        table = _concat(parts)
        return table if clean or self.keep_retracts else drop_retracts(table)

    def _merge(self, split: Split, columns: Sequence[str], predicate: Predicate | None) -> pa.Table:
        assert self.merge_engine is not None
        merge_columns = list(dict.fromkeys(self.key_names + self.sequence_fields + list(columns)))
        # Oldest run first: the highest level, then level-0 files by sequence. Each file holds
        # a key at most once, so a stable sort by key alone leaves every key's versions in
        # sequence order (cheaper than sorting by key and sequence number).
        oldest_first = sorted(split.files, key=lambda f: (-f.level, f.max_sequence_number))
        # The terms of a filter on key and partition columns hold for every version of a key:
        # they may drop rows (and row groups) before the merge.
        # (Partition columns filled in later are left to the final filter.)
        prefilter = restrict(predicate, self._key_and_partition & set(merge_columns))
        # _VALUE_KIND is always read for a merge: other writers' delete_row_count is not to be
        # trusted here (pypaimon 2.1 records 0 for files holding -D and -U rows).
        fast = self._single_row and not self.sequence_fields
        system = [VALUE_KIND] if fast else [SEQUENCE_NUMBER, VALUE_KIND]
        parts = [apply_filter(self._read_file(split, f, merge_columns, system, prune=prefilter), prefilter) for f in oldest_first]
        lookup = self._lookup_merge and not fast
        if lookup:
            parts = [with_level(part, f.level) for part, f in zip(parts, oldest_first, strict=True)]
        rows = _concat(parts)
        if rows.num_rows == 0:
            return rows.drop_columns([LEVEL]) if lookup else rows
        if fast:
            # One take of each key's winning row from the unsorted input (string columns are
            # copied once, no sort of the value columns).
            winners = rows.take(indices(self._winners(rows)))
            return winners if self.keep_retracts else drop_retracts(winners)
        order_columns = self.key_names if not self.sequence_fields else self.key_names + self.sequence_fields + [SEQUENCE_NUMBER]
        order = sort_indices(rows, order_columns, descending=self.merge_engine.descending_fields)
        ordered = rows.take(order)
        if lookup:
            ordered = lookup_versions(ordered, self.key_names)
        if self.keep_retracts:
            return self.merge_engine.merge(ordered, self.key_names)
        return self.merge_engine.merge_and_drop_retracts(ordered, self.key_names)

    def _winners(self, rows: pa.Table) -> np.ndarray:
        """Row index of every key's winner (per the single-row engine), in key order."""
        assert self.merge_engine is not None
        order = sort_order(rows, self.key_names)
        if len(self.key_names) == 1 and pa.types.is_integer(rows.schema.field(self.key_names[0]).type):
            # The order's keys are sorted: group boundaries by NumPy comparison.
            sorted_keys = as_numpy(rows.column(self.key_names[0]))[order]
            starts = np.flatnonzero(np.concatenate([[True], sorted_keys[1:] != sorted_keys[:-1]])).astype(np.int64)
        else:
            starts = group_starts(rows.select(self.key_names).take(order), self.key_names)
        picked = self.merge_engine.pick(starts, group_last(starts, rows.num_rows) + 1)
        assert picked is not None
        return order[picked]

    # -- many splits --------------------------------------------------------------------------
    def read_all(
        self,
        splits: Sequence[Split],
        columns: Sequence[str],
        predicate: Predicate | None,
        arrow_schema: pa.Schema,
        *,
        limit: int | None = None,
    ) -> pa.Table:
        if limit is not None:
            tables = list(self.iter_tables(splits, columns, predicate, limit=limit))
        else:
            pieces = [p for s in splits for p in self.pieces(s)]
            tables = _map(lambda p: self.read_piece(p, columns, predicate), pieces)
        return pa.concat_tables(tables).cast(arrow_schema) if tables else pa.Table.from_batches([], schema=arrow_schema)

    def iter_tables(
        self,
        splits: Sequence[Split],
        columns: Sequence[str],
        predicate: Predicate | None,
        *,
        limit: int | None = None,
        workers: int | None = None,
    ) -> Iterator[pa.Table]:
        """The rows of ``splits`` piece by piece, in order. At most ``workers`` pieces are read
        ahead (one, reading nothing ahead, under a ``limit``), so memory stays bounded by a few
        pieces whatever the table's size."""
        if limit is not None and limit <= 0:
            return
        pieces = iter([p for s in splits for p in self.pieces(s)])
        depth = 1 if limit is not None else max(1, workers or os.cpu_count() or 2)
        remaining = limit
        with ThreadPoolExecutor(max_workers=depth) as pool:
            window: deque[Future[pa.Table]] = deque()

            def submit() -> None:
                piece = next(pieces, None)
                if piece is not None:
                    window.append(pool.submit(self.read_piece, piece, columns, predicate, limit=remaining))

            for _ in range(depth):
                submit()
            try:
                while window:
                    table = window.popleft().result()
                    if remaining is not None:
                        table = table.slice(0, remaining)
                        remaining -= table.num_rows
                    if remaining != 0:
                        submit()
                    if table.num_rows:
                        yield table
                    if remaining == 0:
                        return
            finally:
                for future in window:
                    future.cancel()


def _repeat(value: Any, arrow_type: pa.DataType, n: int) -> pa.Array:
    """``value`` n times, built on buffers (pyarrow's scalar conversion imports pandas)."""
    if pa.types.is_string(arrow_type):
        data = str(value).encode()
        if len(data) * n >= 2**31:
            return pa.repeat(pa.scalar(value, arrow_type), n)  # beyond 32-bit offsets
        offsets = np.arange(n + 1, dtype=np.int32) * np.int32(len(data))
        return pa.Array.from_buffers(arrow_type, n, [None, pa.py_buffer(offsets), pa.py_buffer(data * n)])
    values = np.full(n, value, dtype=np.dtype(f"{'i' if pa.types.is_signed_integer(arrow_type) else 'u'}{arrow_type.bit_width // 8}"))
    return pa.Array.from_buffers(arrow_type, n, [None, pa.py_buffer(values)])


def _map(fn: Any, items: Sequence[Any]) -> list[Any]:
    if len(items) <= 1:
        return [fn(i) for i in items]
    with ThreadPoolExecutor(max_workers=min(len(items), os.cpu_count() or 2)) as pool:
        return list(pool.map(fn, items))


def _concat(parts: list[pa.Table]) -> pa.Table:
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="none")
