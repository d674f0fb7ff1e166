"""Read a data file as the current schema: columns are matched by field id through the file's
own schema version, so renamed columns keep their data, dropped ones vanish, added ones read as
nulls and widened types are cast."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from lakestore.errors import CorruptMetadataError, DataFileMissingError
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND, key_column
from lakestore.io.fileio import FileIO
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.schema import SchemaManager, TableSchema
from lakestore.read.parquet_read import ReadCounters, prunable, read_data_file
from lakestore.read.predicate import Predicate

_SYSTEM = (SEQUENCE_NUMBER, VALUE_KIND)


@dataclass(frozen=True)
class FileColumns:
    """How a data file written under an older schema maps onto ``schema`` (by field id): the file
    columns to read, and each wanted table column's source in the file (None: added later)."""

    file_schema: TableSchema
    user: list[str]
    system: list[str]
    sources: dict[str, str | None]
    targets: dict[str, pa.DataType]

    @classmethod
    def of(cls, meta: DataFileMeta, schema: TableSchema, schemas: SchemaManager, wanted: Sequence[str]) -> FileColumns:
        system = [c for c in wanted if c in _SYSTEM]
        user = [c for c in wanted if c not in _SYSTEM]
        file_schema = schema if meta.schema_id == schema.id else schemas.get(meta.schema_id)
        file_names = {f.id: f.name for f in file_schema.fields}
        sources = {name: file_names.get(schema.field(name).id) for name in user}
        return cls(file_schema, user, system, sources, {name: schema.field(name).type.to_arrow() for name in user})

    @property
    def to_read(self) -> list[str]:
        return list(dict.fromkeys([s for s in self.sources.values() if s is not None] + self.system))

    def conform(self, table: pa.Table) -> pa.Table:
        """File rows as the wanted table columns (renamed, widened, null for added columns)."""
        columns = []
        for name in self.user:
            target, source = self.targets[name], self.sources[name]
            if source is None:
                columns.append(pa.nulls(table.num_rows, target))
                continue
            column = table.column(source)
            columns.append(column if column.type == target else column.cast(target))
        columns += [table.column(c) for c in self.system]
        return pa.Table.from_arrays(columns, names=self.user + self.system)


def read_as_schema(
    file_io: FileIO,
    path: str,
    meta: DataFileMeta,
    schema: TableSchema,
    schemas: SchemaManager,
    wanted: Sequence[str],
    *,
    predicate: Predicate | None = None,
    row_limit: int | None = None,
    counters: ReadCounters | None = None,
) -> pa.Table:
    """``predicate``: skip row groups whose statistics cannot match it (the caller filters the
    rows; only safe where rows are final, not before a merge on other columns or a deletion
    vector). ``row_limit``: read row groups only until this many rows."""
    mapping = FileColumns.of(meta, schema, schemas, wanted)
    stats_columns = _stats_columns(schema, mapping.file_schema, predicate) if predicate is not None else None
    try:
        table, file_rows = read_data_file(
            file_io,
            path,
            mapping.to_read,
            predicate=predicate,
            stats_columns=stats_columns,
            row_limit=row_limit,
            counters=counters,
        )
    except FileNotFoundError as exc:
        raise DataFileMissingError(
            path, "data file referenced by the snapshot is missing (expired meanwhile, or the table is damaged)"
        ) from exc
    if file_rows != meta.row_count or (predicate is None and row_limit is None and table.num_rows != file_rows):
        raise CorruptMetadataError(path, f"holds {file_rows} rows, manifest says {meta.row_count}")
    return mapping.conform(table)


def _stats_columns(schema: TableSchema, file_schema: TableSchema, predicate: Predicate) -> dict[str, str]:
    """Predicate column -> the file columns whose statistics prune for it: the column itself, and
    for a primary-key column its ``_KEY_`` copy (lakestore keeps statistics for those only).
    Only columns of the same type in the file (no widening cast between) and exact statistics."""
    file_fields = {f.id: f for f in file_schema.fields}
    keys = set(file_schema.trimmed_primary_keys)
    out: dict[str, str] = {}
    for name in predicate.columns():
        if name not in schema.field_names:
            continue
        current = schema.field(name)
        source = file_fields.get(current.id)
        if source is None or source.type.to_arrow() != current.type.to_arrow() or not prunable(current.type.to_arrow()):
            continue
        out[name] = key_column(source.name) if source.name in keys else source.name
    return out
