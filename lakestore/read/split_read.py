"""Reading splits: raw concatenation when Paimon's rule allows, else merge-on-read of the sorted
runs with the table's merge engine. Splits are read in parallel threads (Arrow and NumPy release
the GIL)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import group_last, group_starts, sort_indices
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.format.partition_path import bucket_dir, partition_path
from lakestore.io.fileio import FileIO
from lakestore.merge import create_merge_engine, drop_retracts
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.schema import SchemaManager, TableSchema
from lakestore.read.deletion_vectors import apply_vector, read_vectors
from lakestore.read.predicate import Predicate, apply_filter
from lakestore.read.scan import Split
from lakestore.read.schema_evolution import read_as_schema


class SplitReader:
    def __init__(self, file_io: FileIO, table_path: str, schema: TableSchema, schemas: SchemaManager) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.schema = schema
        self.schemas = schemas
        self.options = schema.core_options()
        self.primary_key = bool(schema.primary_keys)
        self.deletion_vectors = self.options.deletion_vectors
        self.merge_engine = create_merge_engine(schema) if self.primary_key else None
        self.key_names = list(schema.trimmed_primary_keys)
        self.sequence_fields = list(self.options.sequence_fields)
        self.partition_types = schema.types_of(schema.partition_keys)
        # Filters on these columns are exact per file: every version of a key shares them.
        self._key_and_partition = set(schema.primary_keys) | set(schema.partition_keys)

    def file_path(self, partition_values: tuple[Any, ...], bucket: int, f: DataFileMeta) -> str:
        if f.external_path:
            return f.external_path
        part = partition_path(
            self.schema.partition_keys, self.partition_types, partition_values, default_name=self.options.partition_default_name
        )
        return f"{bucket_dir(self.table_path, part, bucket)}/{f.file_name}"

    def read_file(
        self, partition_values: tuple[Any, ...], bucket: int, f: DataFileMeta, columns: Sequence[str], *, system: bool
    ) -> pa.Table:
        """One data or changelog file as the current schema (plus ``_SEQUENCE_NUMBER`` and
        ``_VALUE_KIND`` when ``system``)."""
        wanted = list(columns) + ([SEQUENCE_NUMBER, VALUE_KIND] if system else [])
        return read_as_schema(self.file_io, self.file_path(partition_values, bucket, f), f, self.schema, self.schemas, wanted)

    def _read_file(self, split: Split, f: DataFileMeta, columns: Sequence[str], system: bool) -> pa.Table:
        return self.read_file(split.partition_values, split.bucket, f, columns, system=system)

    def read(self, split: Split, columns: Sequence[str], predicate: Predicate | None) -> pa.Table:
        """Rows of one split restricted to ``columns`` (in that order) and filtered exactly."""
        needed = list(dict.fromkeys(list(columns) + sorted(predicate.columns() if predicate else [])))
        if self.deletion_vectors:
            # No merge (Paimon's ApplyDeletionVectorReader): vectors leave one live row per key.
            # Vectors hold row positions: each file must be read whole (no row-group pruning).
            vectors = read_vectors(self.file_io, self.table_path, dict(split.deletion_files))
            clean = not self.primary_key or all(f.delete_row_count == 0 for f in split.files)
            parts = [apply_vector(self._read_file(split, f, needed, not clean), vectors.get(f.file_name)) for f in split.files]
            table = _concat(parts)
            if not clean:
                table = drop_retracts(table)
        elif not self.primary_key:
            parts = [self._read_file(split, f, needed, False) for f in split.files]
            table = _concat(parts)
        elif split.raw_convertible:
            # Files whose metadata says they hold no retraction are read without system columns.
            clean = all(f.delete_row_count == 0 for f in split.files)
            parts = [self._read_file(split, f, needed, not clean) for f in split.files]
            table = _concat(parts)
            if not clean:
                table = drop_retracts(table)
        else:
            merge_columns = list(dict.fromkeys(self.key_names + self.sequence_fields + needed))
            # Oldest run first: the highest level, then level-0 files by sequence. Each file holds
            # a key at most once, so a stable sort by key alone leaves every key's versions in
            # sequence order (cheaper than sorting by key and sequence number).
            oldest_first = sorted(split.files, key=lambda f: (-f.level, f.max_sequence_number))
            prefilter = predicate if predicate is not None and predicate.columns() <= self._key_and_partition else None
            parts = [apply_filter(self._read_file(split, f, merge_columns, True), prefilter) for f in oldest_first]
            rows = _concat(parts)
            if rows.num_rows == 0:
                return rows.select(list(columns))
            order_columns = self.key_names if not self.sequence_fields else self.key_names + self.sequence_fields + [SEQUENCE_NUMBER]
            order = sort_indices(rows, order_columns)
            assert self.merge_engine is not None
            keys = rows.select(self.key_names).take(order)
            starts = group_starts(keys, self.key_names)
            picked = self.merge_engine.pick(starts, group_last(starts, keys.num_rows) + 1)
            if picked is not None:
                # One take of the winning rows from the unsorted input instead of sorting all
                # columns first (the engine keeps one input row per key).
                table = drop_retracts(rows.take(np.asarray(order)[picked]))
            else:
                table = self.merge_engine.merge_and_drop_retracts(rows.take(order), self.key_names)
        table = apply_filter(table, predicate)
        return table.select(list(columns))

    def read_all(self, splits: Sequence[Split], columns: Sequence[str], predicate: Predicate | None, arrow_schema: pa.Schema) -> pa.Table:
        if not splits:
            return arrow_schema.empty_table()
        if len(splits) == 1:
            tables = [self.read(splits[0], columns, predicate)]
        else:
            workers = min(len(splits), os.cpu_count() or 2)
            with ThreadPoolExecutor(max_workers=workers) as pool:
                tables = list(pool.map(lambda s: self.read(s, columns, predicate), splits))
        return pa.concat_tables(tables).cast(arrow_schema) if tables else arrow_schema.empty_table()


def _concat(parts: list[pa.Table]) -> pa.Table:
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="none")
