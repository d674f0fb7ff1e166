"""Read a data file as the current schema: columns are matched by field id through the file's
own schema version, so renamed columns keep their data, dropped ones vanish, added ones read as
nulls and widened types are cast."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from lakestore.errors import CorruptMetadataError, DataFileMissingError
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.format.parquet import read_parquet
from lakestore.io.fileio import FileIO
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.schema import SchemaManager, TableSchema

_SYSTEM = (SEQUENCE_NUMBER, VALUE_KIND)


def read_as_schema(
    file_io: FileIO, path: str, meta: DataFileMeta, schema: TableSchema, schemas: SchemaManager, wanted: Sequence[str]
) -> pa.Table:
    system = [c for c in wanted if c in _SYSTEM]
    user = [c for c in wanted if c not in _SYSTEM]
    file_schema = schema if meta.schema_id == schema.id else schemas.get(meta.schema_id)
    file_names = {f.id: f.name for f in file_schema.fields}
    sources = {name: file_names.get(schema.field(name).id) for name in user}
    to_read = [s for s in sources.values() if s is not None] + system
    try:
        table = read_parquet(file_io, path, columns=list(dict.fromkeys(to_read)))
    except FileNotFoundError as exc:
        raise DataFileMissingError(
            path, "data file referenced by the snapshot is missing (expired meanwhile, or the table is damaged)"
        ) from exc
    if table.num_rows != meta.row_count:
        raise CorruptMetadataError(path, f"holds {table.num_rows} rows, manifest says {meta.row_count}")
    columns = []
    for name in user:
        target = schema.field(name).type.to_arrow()
        source = sources[name]
        if source is None:
            columns.append(pa.nulls(table.num_rows, target))
            continue
        column = table.column(source)
        columns.append(column if column.type == target else column.cast(target))
    columns += [table.column(c) for c in system]
    return pa.Table.from_arrays(columns, names=user + system)
