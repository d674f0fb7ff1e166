"""Reads of row-tracking and data-evolution tables (Paimon 1.3+), as Paimon 2.0 reads them.

Row tracking (``row-tracking.enabled``): row i of a data file has ``_ROW_ID`` = the file's
``_FIRST_ROW_ID`` + i and ``_SEQUENCE_NUMBER`` = the file's max sequence number (the snapshot
id that committed it), unless the file holds a non-null value in a physical column of that name
(files Paimon's Flink/Spark compactors rewrite, whose ``_WRITE_COLS`` name them). These columns
are read on request only (Paimon's ``$row_tracking`` system table appends them to the columns).

Data evolution (``data-evolution.enabled``): a file may hold some columns of rows that another
file holds (``_WRITE_COLS``, null meaning every column of the file's schema); files whose row-id
ranges overlap form a group (Paimon's ``DataEvolutionSplitRead.mergeRangesAndSort``), must all
cover the same range, and are read newest first (max sequence number descending): each column
comes from the first file of the group that holds it (matched by field id through the file's own
schema), the row-tracking columns from the first file; a column no file holds reads as null.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import CorruptMetadataError
from lakestore.format.arrow_ops import from_numpy
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.schema import SchemaManager, TableSchema

ROW_ID = "_ROW_ID"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
ROW_TRACKING_COLUMNS = (ROW_ID, SEQUENCE_NUMBER)
ROW_TRACKING_FIELDS = {name: pa.field(name, pa.int64(), nullable=False) for name in ROW_TRACKING_COLUMNS}

# Reads the named physical columns of a data file (no schema mapping): its row-tracking columns.
PhysicalReader = Callable[[DataFileMeta, Sequence[str]], pa.Table]
# Reads a data file as the current schema's named columns (by field id through its schema).
FileReader = Callable[[DataFileMeta, Sequence[str]], pa.Table]


def tracking_columns(f: DataFileMeta, names: Sequence[str], read_physical: PhysicalReader, *, source: str = "") -> list[pa.Array]:
    """The row-tracking columns ``names`` of every row of file ``f``, in file order."""
    stored = [n for n in names if n in (f.write_cols or ())]
    physical = read_physical(f, stored) if stored else None
    out = []
    for name in names:
        if name == ROW_ID:
            if f.first_row_id is None and physical is None:
                raise CorruptMetadataError(source or f.file_name, f"data file {f.file_name} of a row-tracking table has no _FIRST_ROW_ID")
            first = f.first_row_id
            computed = None if first is None else from_numpy(np.arange(first, first + f.row_count, dtype=np.int64))
        else:
            computed = from_numpy(np.full(f.row_count, f.max_sequence_number, dtype=np.int64))
        if physical is not None and name in physical.column_names:
            column = physical.column(name).combine_chunks().cast(pa.int64())
            if computed is not None and column.null_count:
                column = pc.coalesce(column, computed)
            elif column.null_count:
                raise CorruptMetadataError(source or f.file_name, f"data file {f.file_name} has null {name} and no _FIRST_ROW_ID")
            out.append(column)
        else:
            assert computed is not None
            out.append(computed)
    return out


def row_id_groups(files: Sequence[DataFileMeta], *, source: str = "") -> list[list[DataFileMeta]]:
    """Files grouped by overlapping row-id ranges (in row-id order), each group newest first."""
    missing = [f.file_name for f in files if f.first_row_id is None]
    if missing:
        raise CorruptMetadataError(source or missing[0], f"data files {missing} of a data-evolution table have no _FIRST_ROW_ID")
    ordered = sorted(files, key=lambda f: (f.first_row_id, -f.max_sequence_number))
    groups: list[list[DataFileMeta]] = []
    end = -1
    for f in ordered:
        first = f.first_row_id
        assert first is not None
        last = first + f.row_count - 1
        if groups and first <= end:
            groups[-1].append(f)
            end = max(end, last)
        else:
            groups.append([f])
            end = last
    for group in groups:
        group.sort(key=lambda f: -f.max_sequence_number)  # stable: ties keep their order
        ranges = {(f.first_row_id, f.row_count) for f in group}
        if len(ranges) > 1:
            raise CorruptMetadataError(
                source or group[0].file_name,
                f"data files {[f.file_name for f in group]} overlap in row ids without covering the same range"
                " (Paimon refuses to read them)",
            )
    return groups


def file_field_ids(f: DataFileMeta, schema: TableSchema, schemas: SchemaManager) -> set[int]:
    """Field ids of the columns file ``f`` holds: its ``_WRITE_COLS`` (all columns when null) of
    the schema it was written with."""
    file_schema = schema if f.schema_id == schema.id else schemas.get(f.schema_id)
    names = f.write_cols if f.write_cols is not None else file_schema.field_names
    by_name = {field.name: field.id for field in file_schema.fields}
    return {by_name[n] for n in names if n in by_name}


def read_group(
    group: Sequence[DataFileMeta],
    columns: Sequence[str],
    tracking: Sequence[str],
    schema: TableSchema,
    schemas: SchemaManager,
    read_file: FileReader,
    read_physical: PhysicalReader,
    *,
    source: str = "",
) -> pa.Table:
    """The rows of one row-id group (newest file first) as ``columns`` then ``tracking``."""
    rows = group[0].row_count
    owner: dict[str, int] = {}
    ids = [file_field_ids(f, schema, schemas) for f in group]
    for name in columns:
        field_id = schema.field(name).id
        holder = next((i for i, held in enumerate(ids) if field_id in held), None)
        if holder is not None:
            owner[name] = holder
    arrays: dict[str, pa.ChunkedArray | pa.Array] = {}
    for i, f in enumerate(group):
        wanted = [n for n in columns if owner.get(n) == i]
        if not wanted:
            continue
        table = read_file(f, wanted)
        if table.num_rows != rows:
            message = f"data file {f.file_name} holds {table.num_rows} rows, its row-id group {rows}"
            raise CorruptMetadataError(source or f.file_name, message)
        for name in wanted:
            arrays[name] = table.column(name)
    out = [arrays[n] if n in arrays else pa.nulls(rows, schema.field(n).type.to_arrow()) for n in columns]
    out += tracking_columns(group[0], tracking, read_physical, source=source)
    names = list(columns) + list(tracking)
    return pa.Table.from_arrays(out, schema=pa.schema([_field(schema, n) for n in names]))


def _field(schema: TableSchema, name: str) -> pa.Field:
    if name in ROW_TRACKING_FIELDS:
        return ROW_TRACKING_FIELDS[name]
    return schema.arrow_schema().field(name)
