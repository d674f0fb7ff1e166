"""The output of a compaction written slice by slice: one sorted run in data files rolled at
``target-file-size`` on disk, with only each open file's statistics (not its rows) in memory."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lakestore.format.binary_row import encode_rows
from lakestore.format.file_format import FileFormat, FormatWriter
from lakestore.format.fileindex.registry import FileIndexBuilder
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND, kv_file_schema
from lakestore.format.parquet import ROW_GROUP_ROWS
from lakestore.format.types import DataType
from lakestore.merge import retract_count
from lakestore.meta.manifest import DataFileMeta, SimpleStats
from lakestore.meta.stats import KEY_STATS_MODE, column_stats
from lakestore.write.file_writer import DataFileWriter


def _summary(rows: pa.Table, names: list[str], types: list[DataType], fmt: FileFormat) -> tuple[pa.Table, list[int | None]]:
    """Two rows per column, its min and max (nulls where it has no value), and null counts:
    statistics of a file are those of its chunks' summaries with the counts added up."""
    arrays = []
    nulls: list[int | None] = []
    for name, dtype in zip(names, types, strict=True):
        if dtype.is_nested:
            arrays.append(pa.nulls(2, pa.int64()))  # no min/max for nested columns (ORC counts nulls)
            nulls.append(rows.column(name).null_count)
            continue
        column = rows.column(name)
        arrow_type = dtype.to_arrow()
        nulls.append(column.null_count)
        arrays.append(pa.nulls(2, arrow_type) if column.null_count == len(column) else fmt.min_max(column, arrow_type))
    return pa.Table.from_arrays(arrays, names=names), nulls


@dataclass
class _FileStats:
    name: str
    path: str
    rows: int = 0
    min_sequence: int | None = None
    max_sequence: int | None = None
    deletes: int = 0
    first_key: list[pa.Array] = field(default_factory=list)
    last_key: list[pa.Array] = field(default_factory=list)
    key_summaries: list[pa.Table] = field(default_factory=list)
    key_nulls: list[int | None] = field(default_factory=list)
    value_summaries: list[pa.Table] = field(default_factory=list)
    value_nulls: list[int | None] = field(default_factory=list)
    index: FileIndexBuilder | None = None  # the file's index blob, fed the rows it is written


def _add_counts(total: list[int | None], more: list[int | None]) -> list[int | None]:
    if not total:
        return list(more)
    return [None if a is None or b is None else a + b for a, b in zip(total, more, strict=True)]


class SortedRunWriter:
    """Appends key-ordered rows (user columns + _SEQUENCE_NUMBER + _VALUE_KIND, unique keys) to
    data files of one bucket as ``DataFileWriter.write_kv`` lays them out; a file is closed once
    its size on disk reaches the target. ``finish`` returns the files' metadata."""

    def __init__(self, writer: DataFileWriter, *, level: int, file_source: int) -> None:
        self.writer = writer
        self.level = level
        self.file_source = file_source
        schema = writer.schema
        self.options = writer.options
        self._key_names = list(schema.trimmed_primary_keys)
        self._key_types = schema.types_of(self._key_names)
        self._user_schema = schema.arrow_schema()
        # the value statistics the writer's options give files of this level (lakestore/meta/stats.py)
        self._plan = writer.value_stats_plan(level)
        self._value_names = list(self._plan.names)
        self._value_types = list(self._plan.types)
        self._file_schema = kv_file_schema(
            self._user_schema, self._key_names, {f.name: f.id for f in schema.fields}, {f.name: f.type for f in schema.fields}
        )
        self._stats_on = bool(self._plan.names)
        self._format: FileFormat = writer.file_format(level)
        self._open: tuple[Any, FormatWriter, Any, _FileStats] | None = None
        self.files: list[DataFileMeta] = []

    def write(self, rows: pa.Table) -> None:
        if not rows.num_rows:
            return
        per_row = max(1, rows.nbytes // rows.num_rows)
        group_rows = int(min(ROW_GROUP_ROWS, max(256, self.options.target_file_size // per_row)))
        offset = 0
        while offset < rows.num_rows:
            chunk = rows.slice(offset, group_rows)
            self._append(chunk, group_rows)
            offset += chunk.num_rows

    def _append(self, rows: pa.Table, group_rows: int) -> None:
        columns = [rows.column(k) for k in self._key_names]
        columns += [rows.column(SEQUENCE_NUMBER), rows.column(VALUE_KIND)]
        columns += [rows.column(f.name) for f in self._user_schema]
        table = pa.Table.from_arrays(columns, schema=self._file_schema)
        if self._open is not None and not self._open[1].accepts(table):
            self._close()  # e.g. parquet INT96 holds none of this batch's timestamps lakestore reads back right
        if self._open is None:
            self._start(table)
        assert self._open is not None
        _, file_writer, sink, stats = self._open
        file_writer.write(table, group_rows)
        self._account(stats, rows)
        if stats.index is not None:
            stats.index.add(rows)
        if sink.tell() >= self.options.target_file_size:
            self._close()

    def _start(self, first: pa.Table) -> None:
        new = self.writer.new_file(self.level)  # removed with the writer's files if the commit is abandoned
        name, path = new.name, new.path
        context = self.writer.file_io.open_output(path)
        sink = context.__enter__()
        try:
            file_writer = self._format.open_writer(
                sink,
                first,
                compression=self.writer.compression(self.level),
                zstd_level=self.options.file_compression_zstd_level,
                target_size=self.options.target_file_size,
            )
        except BaseException as exc:
            context.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._open = (context, file_writer, sink, _FileStats(name, path, index=self.writer.file_index_builder()))

    def _account(self, stats: _FileStats, rows: pa.Table) -> None:
        bounds = pc.min_max(rows.column(SEQUENCE_NUMBER))
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        stats.min_sequence = low if stats.min_sequence is None else min(stats.min_sequence, low)
        stats.max_sequence = high if stats.max_sequence is None else max(stats.max_sequence, high)
        stats.deletes += retract_count(rows.column(VALUE_KIND))
        if not stats.rows:
            stats.first_key = [rows.column(k).slice(0, 1).combine_chunks() for k in self._key_names]
        stats.last_key = [rows.column(k).slice(rows.num_rows - 1, 1).combine_chunks() for k in self._key_names]
        stats.rows += rows.num_rows
        summary, nulls = _summary(rows, self._key_names, self._key_types, self._format)
        stats.key_summaries.append(summary)
        stats.key_nulls = _add_counts(stats.key_nulls, nulls)
        if self._stats_on:
            summary, nulls = _summary(rows, self._value_names, self._value_types, self._format)
            stats.value_summaries.append(summary)
            stats.value_nulls = _add_counts(stats.value_nulls, nulls)

    def _close(self) -> None:
        assert self._open is not None
        context, file_writer, _, stats = self._open
        self._open = None
        file_writer.close()
        context.__exit__(None, None, None)
        self.files.append(self.writer.located(self.writer.finish_file_index(self._meta(stats), stats.index)))

    def _meta(self, stats: _FileStats) -> DataFileMeta:
        edges = encode_rows(self._key_types, [pa.concat_arrays([a, b]) for a, b in zip(stats.first_key, stats.last_key, strict=True)], 2)
        assert stats.min_sequence is not None and stats.max_sequence is not None
        return DataFileMeta(
            file_name=stats.name,
            file_size=self.writer.file_io.file_size(stats.path),
            row_count=stats.rows,
            min_key=edges.row(0),
            max_key=edges.row(1),
            key_stats=_combined(
                stats.key_summaries,
                stats.key_nulls,
                self._key_names,
                self._key_types,
                [KEY_STATS_MODE] * len(self._key_names),
                self._format,
            ),
            value_stats=_combined(
                stats.value_summaries, stats.value_nulls, self._value_names, self._value_types, self._plan.modes, self._format
            )
            if self._stats_on
            else self._plan.stats(pa.table({})),
            value_stats_cols=self._plan.stats_cols,
            min_sequence_number=stats.min_sequence,
            max_sequence_number=stats.max_sequence,
            schema_id=self.writer.schema.id,
            level=self.level,
            creation_time_ms=int(time.time() * 1000),
            delete_row_count=stats.deletes,
            file_source=self.file_source,
        )

    def finish(self) -> list[DataFileMeta]:
        if self._open is not None:
            self._close()
        return self.files

    def abort(self) -> None:
        """Drop the open file after a failure (the writer's ``delete_written`` removes the closed ones)."""
        if self._open is not None:
            context, file_writer, _, _ = self._open
            self._open = None
            failure = RuntimeError("compaction failed")
            try:
                file_writer.close()
            finally:
                context.__exit__(RuntimeError, failure, None)  # an exception: the partial file is discarded


def _combined(
    summaries: list[pa.Table], nulls: list[int | None], names: list[str], types: list[DataType], modes: Sequence[str], fmt: FileFormat
) -> SimpleStats:
    """The statistics of a file from its chunks' summaries: min/max of the chunks' min/max under
    each column's mode (truncated once, at the end), null counts added up (none where the mode
    keeps none)."""
    stats = column_stats(pa.concat_tables(summaries), names, types, modes, fmt)
    kept = stats.null_counts or ()
    return SimpleStats(stats.min_values, stats.max_values, tuple(None if k is None else n for k, n in zip(kept, nulls, strict=True)))
