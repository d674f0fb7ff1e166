"""Partial-column writes of data-evolution tables: new values for some columns of rows named by
``_ROW_ID``, written as Paimon's data-evolution writers write them (pypaimon 2.1's
``update_by_arrow_with_row_id``, Paimon's MERGE INTO): for every row-id group holding an updated
row, one file with the group's whole row-id range (``_FIRST_ROW_ID`` = the group's, rows not
updated keep their current values) and only the partition and updated columns (``_WRITE_COLS``).
Readers merge it over the older files of the group, newest first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.errors import SchemaMismatchError
from lakestore.io.fileio import FileIO
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.paths import TablePaths
from lakestore.meta.schema import TableSchema
from lakestore.meta.stats import EMPTY_STATS
from lakestore.write.file_writer import DataFileWriter, FileTarget
from lakestore.write.row_tracking import ROW_ID

# Reads the current rows of one row-id group (a read piece) as the named columns, in row-id order.
GroupReader = Callable[[Any, Sequence[str]], pa.Table]


@dataclass
class ColumnUpdate:
    """What an update wrote: the messages to commit, and the writers (to delete their files on abort)."""

    messages: list[CommitMessage]
    writers: list[DataFileWriter]

    def abort(self) -> None:
        for writer in self.writers:
            writer.delete_written()


def write_column_updates(
    file_io: FileIO, table_path: str, schema: TableSchema, pieces: Sequence[Any], data: pa.Table, read_group: GroupReader
) -> ColumnUpdate:
    """``pieces``: the row-id groups of the snapshot to update (``SplitReader.pieces`` of a
    data-evolution table: ``piece.split`` holds one group's files)."""
    columns = [c for c in data.column_names if c != ROW_ID]
    if ROW_ID not in data.column_names:
        raise SchemaMismatchError(f"an update of columns needs a {ROW_ID} column naming the rows")
    unknown = [c for c in columns if c not in schema.field_names]
    if unknown or not columns:
        raise SchemaMismatchError(f"columns to update {columns} must be columns of the table ({schema.field_names}), at least one")
    partition = [c for c in columns if c in schema.partition_keys]
    if partition:
        raise SchemaMismatchError(f"partition columns {partition} cannot be updated in place")
    if len(set(columns)) < len(columns):
        raise SchemaMismatchError(f"columns to update {columns} name a column twice")
    ids_column = data.column(ROW_ID)
    if ids_column.null_count:
        raise SchemaMismatchError(f"{ROW_ID} must not be null")
    ids = np.asarray(ids_column.to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    if len(ids) > 1 and (ids[1:] == ids[:-1]).any():
        raise SchemaMismatchError(f"{ROW_ID} names a row twice")
    arrow = schema.arrow_schema()
    new = data.select(columns).take(pa.array(order))
    new = pa.Table.from_arrays([new.column(c).cast(arrow.field(c).type) for c in columns], names=columns)

    # which group each updated row falls in, before anything is written
    plan: list[tuple[Any, int, int, int]] = []  # (piece, first row id, start, stop) in ``ids``
    covered = 0
    for piece in pieces:
        first = piece.split.files[0].first_row_id
        count = piece.split.files[0].row_count
        start, stop = np.searchsorted(ids, [first, first + count])
        if stop > start:
            plan.append((piece, first, int(start), int(stop)))
            covered += int(stop - start)
    if covered < len(ids):
        known = np.zeros(len(ids), dtype=bool)
        for _, _, start, stop in plan:
            known[start:stop] = True
        raise SchemaMismatchError(f"{ROW_ID} values {ids[~known][:10].tolist()} name no row of the table")

    written = [f.name for f in schema.fields if f.name in schema.partition_keys or f.name in columns]
    projected = replace(schema, fields=tuple(f for f in schema.fields if f.name in written))
    paths = TablePaths.of(table_path, schema)
    update = ColumnUpdate([], [])
    try:
        for piece, first, start, stop in plan:
            split = piece.split
            count = split.files[0].row_count
            current = read_group(piece, [*schema.partition_keys, *columns, ROW_ID])
            if current.num_rows != count or current.column(ROW_ID).to_pylist() != list(range(first, first + count)):
                raise SchemaMismatchError(f"row-id group {first}..{first + count - 1} did not read back in row-id order")
            take = np.arange(count, dtype=np.int64)
            take[ids[start:stop] - first] = count + np.arange(stop - start, dtype=np.int64)
            index = pa.array(take)
            arrays = {
                c: pa.concat_arrays([current.column(c).combine_chunks(), new.column(c).slice(start, stop - start).combine_chunks()]).take(
                    index
                )
                for c in columns
            }
            for c in schema.partition_keys:
                arrays[c] = current.column(c).combine_chunks()
            rows = pa.Table.from_arrays([arrays[c] for c in written], names=written)
            writer = DataFileWriter(file_io, projected, FileTarget(table_path, paths.partition_path(split.partition_values), split.bucket))
            update.writers.append(writer)
            metas = writer.write_append(rows, first_sequence=0)
            if len(metas) != 1:
                raise SchemaMismatchError(f"the update of row-id group {first}.. would need {len(metas)} files (one file per group)")
            meta = replace(metas[0], first_row_id=first, write_cols=tuple(written))
            if meta.value_stats_cols is None:  # statistics positional over all columns: keep none
                meta = replace(meta, value_stats=EMPTY_STATS, value_stats_cols=())
            update.messages.append(CommitMessage(split.partition, split.bucket, split.total_buckets, new_files=(meta,)))
    except BaseException:
        update.abort()
        raise
    return update
