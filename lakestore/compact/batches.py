"""Streaming a data file as the current schema, batch by batch (compaction reads its inputs in
key-range slices and never a whole file at once). Columns are matched by field id through the
file's schema version as ``lakestore.read.schema_evolution.read_as_schema`` matches them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

from lakestore.errors import CorruptMetadataError, DataFileMissingError
from lakestore.format.formats import format_of_file
from lakestore.io.fileio import FileIO
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.schema import SchemaManager, TableSchema
from lakestore.read.deletion_vectors import apply_vector
from lakestore.read.schema_evolution import FileColumns


def read_batches(
    file_io: FileIO,
    path: str,
    meta: DataFileMeta,
    schema: TableSchema,
    schemas: SchemaManager,
    wanted: Sequence[str],
    *,
    batch_rows: int,
    deleted: np.ndarray | None = None,
) -> Iterator[pa.Table]:
    """The file's rows in batches of up to ``batch_rows`` (fewer where ``deleted``, the sorted
    positions of its deletion vector, removes rows)."""
    mapping = FileColumns.of(meta, schema, schemas, wanted)
    if deleted is not None and len(deleted) and int(deleted[-1]) >= meta.row_count:
        raise CorruptMetadataError("deletion vector", f"position {int(deleted[-1])} beyond the {meta.row_count} rows of {path}")
    try:
        source = file_io.arrow_filesystem().open_input_file(file_io.arrow_path(path))
    except FileNotFoundError as exc:
        raise DataFileMissingError(
            path, "data file referenced by the snapshot is missing (expired meanwhile, or the table is damaged)"
        ) from exc
    with source:
        file_rows, batches = format_of_file(path).batches(source, path, mapping.to_read, batch_rows)
        if file_rows != meta.row_count:
            raise CorruptMetadataError(path, f"holds {file_rows} rows, manifest says {meta.row_count}")
        offset = 0
        for batch in batches:
            rows = mapping.conform(pa.Table.from_batches([batch]))
            if deleted is not None and len(deleted):
                low, high = np.searchsorted(deleted, [offset, offset + rows.num_rows])
                rows = apply_vector(rows, deleted[low:high].astype(np.int64) - offset)
            offset += batch.num_rows
            yield rows
