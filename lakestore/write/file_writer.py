"""Writes sorted runs or append data into data files rolled at ``target-file-size``, and
describes each file for the manifest (row count, key range, statistics, sequence range)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from lakestore.format.binary_row import EMPTY_ROW
from lakestore.format.file_format import FileFormat, WrittenFile, write_rolling
from lakestore.format.fileindex.format import INDEX_FILE_SUFFIX
from lakestore.format.fileindex.registry import FileIndexBuilder, FileIndexOptions, file_index_options
from lakestore.format.formats import format_named
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND, append_file_schema, kv_file_schema
from lakestore.format.parquet import ROW_GROUP_ROWS
from lakestore.io.factory import io_for
from lakestore.io.fileio import FileIO
from lakestore.merge import retract_count
from lakestore.meta.manifest import FILE_SOURCE_APPEND, DataFileMeta
from lakestore.meta.paths import NewFile, TablePaths
from lakestore.meta.schema import TableSchema
from lakestore.meta.stats import EMPTY_STATS, ValueStatsPlan, sorted_key_bounds, value_stats_plan


@dataclass(frozen=True)
class FileTarget:
    """Where a writer puts files: one (partition, bucket) directory of one table."""

    table_path: str
    partition_path: str
    bucket: int


class _SchemaState:
    """What every file writer of one schema derives from it: computed once per schema instead of
    once per bucket writer (a write into many small partitions creates thousands of writers)."""

    def __init__(self, table_path: str, schema: TableSchema) -> None:
        self.schema = schema  # held: the cache is keyed by its id
        self.paths = TablePaths.of(table_path, schema)
        self.options = self.paths.options
        self.field_ids = {f.name: f.id for f in schema.fields}
        self.types = {f.name: f.type for f in schema.fields}
        self.user_schema = schema.arrow_schema()
        self.value_types = [f.type for f in schema.fields]
        self.key_names = list(schema.trimmed_primary_keys)
        self.key_types = schema.types_of(self.key_names)
        self.target_file_size: int = self.options.target_file_size
        self.zstd_level = self.options.file_compression_zstd_level
        # (changelog file?, level) -> codec / format / value-stats plan; races only compute a value twice
        self.compressions: dict[tuple[bool, int], str] = {}
        self.formats: dict[tuple[bool, int], FileFormat] = {}
        self.plans: dict[tuple[bool, int], ValueStatsPlan] = {}
        self._kv_schema: pa.Schema | None = None
        self._append_schema: pa.Schema | None = None
        self._file_index: FileIndexOptions | None = None

    def file_index(self) -> FileIndexOptions:
        """The ``file-index.*`` indexes of the table's data files (``OptionError`` when refused)."""
        if self._file_index is None:
            # data-evolution updates write files of some columns (a projected schema)
            self._file_index = file_index_options(self.schema.options, self.types, partial=self.options.data_evolution)
        return self._file_index

    def kv_schema(self) -> pa.Schema:
        if self._kv_schema is None:
            self._kv_schema = kv_file_schema(self.user_schema, self.key_names, self.field_ids, self.types)
        return self._kv_schema

    def append_schema(self) -> pa.Schema:
        if self._append_schema is None:
            self._append_schema = append_file_schema(self.user_schema, self.field_ids, self.types)
        return self._append_schema


_STATES: OrderedDict[tuple[str, int], _SchemaState] = OrderedDict()
_STATES_LOCK = threading.Lock()
_MAX_STATES = 32


def _schema_state(table_path: str, schema: TableSchema) -> _SchemaState:
    key = (table_path, id(schema))
    with _STATES_LOCK:
        state = _STATES.get(key)
        if state is not None and state.schema is schema:
            _STATES.move_to_end(key)
            return state
    state = _SchemaState(table_path, schema)
    with _STATES_LOCK:
        _STATES[key] = state
        while len(_STATES) > _MAX_STATES:
            _STATES.popitem(last=False)
    return state


class DataFileWriter:
    """Creates the data (``prefix`` "data") or changelog ("changelog") files of one bucket, named
    and placed by ``lakestore.meta.paths`` (``data-<uuid>-<n>.parquet`` by default, ``.orc`` for
    ORC files, maybe under an external path), in the format ``file_format`` gives their level.
    Remembers what it wrote so that an aborted write can remove its files."""

    def __init__(self, file_io: FileIO, schema: TableSchema, target: FileTarget, *, prefix: str = "data") -> None:
        self.schema = schema
        self.target = target
        self.prefix = prefix
        state = _schema_state(target.table_path, schema)
        self._state = state
        # External paths pick roots per writer (round robin from a random root): their own
        # TablePaths; otherwise the layout is the same for every writer of the schema.
        table_paths = TablePaths.of(target.table_path, schema) if state.paths.external is not None else state.paths
        self.paths = table_paths.for_bucket(target.partition_path, target.bucket)
        # External data paths may sit on another file system than the table (one per table:
        # lakestore.meta.paths refuses external paths that mix file systems).
        probe = self.paths.table.external_root_list
        self.file_io = io_for(file_io, probe[0], schema.options) if probe else file_io
        self.options = state.options
        self.written: list[str] = []
        self._by_name: dict[str, NewFile] = {}
        self._field_ids = state.field_ids
        self._user_schema = state.user_schema
        self._value_types = state.value_types
        self._key_names = state.key_names
        self._key_types = state.key_types
        if not self.is_changelog:
            state.file_index()  # refused index options fail before any file is written

    @property
    def is_changelog(self) -> bool:
        return self.prefix == "changelog"

    def compression(self, level: int) -> str:
        """Paimon's codec for a file at ``level``: ``changelog-file.compression`` for changelog
        files, else ``file.compression.per.level`` (primary-key files), else ``file.compression``."""
        key = (self.is_changelog, level)
        codec = self._state.compressions.get(key)
        if codec is None:
            options = self.options
            if self.is_changelog and options.get("changelog-file.compression") is not None:
                codec = options.changelog_file_compression
            elif self.schema.primary_keys:
                codec = options.file_compression_per_level.get(level, options.file_compression)
            else:
                codec = options.file_compression
            self._state.compressions[key] = codec
        return codec

    def file_format(self, level: int) -> FileFormat:
        """The format of a file at ``level``: ``changelog-file.format`` (else ``file.format``) for
        changelog files, ``file.format.per.level`` (primary-key files), else ``file.format``.
        Raises ``UnsupportedTableError`` for a format lakestore does not write."""
        key = (self.is_changelog, level)
        fmt = self._state.formats.get(key)
        if fmt is None:
            options = self.options
            if self.is_changelog:
                name = options.changelog_file_format
            elif self.schema.primary_keys:
                name = options.file_format_per_level.get(level, options.file_format)
            else:
                name = options.file_format
            fmt = self._state.formats[key] = format_named(name)
        return fmt

    def value_stats_plan(self, level: int) -> ValueStatsPlan:
        """The value statistics of a file this writer writes at ``level`` (lakestore/meta/stats.py).
        Append files: ``metadata.stats-mode``. Primary-key files: ``metadata.stats-mode.per.level``,
        else ``metadata.stats-mode``, except that level-0 runs get none unless the per-level option
        names level 0 (``_VALUE_STATS_COLS`` = [], as pypaimon writes them): readers cannot filter
        unmerged runs by value, and the statistics cost ~10% of a flush. Changelog files:
        ``changelog-file.stats-mode``, else as level-0 runs."""
        key = (self.is_changelog, level)
        plan = self._state.plans.get(key)
        if plan is not None:
            return plan
        options = self.options
        if not self.schema.primary_keys:
            mode = options.stats_mode
        elif self.is_changelog and options.changelog_file_stats_mode is not None:
            mode = options.changelog_file_stats_mode
        else:
            level = 0 if self.is_changelog else level
            mode = options.stats_mode_per_level.get(level, "none" if level == 0 else options.stats_mode)
        plan = value_stats_plan(
            [f.name for f in self.schema.fields],
            self._value_types,
            mode=mode,
            field_modes=options.field_stats_modes,
            keep_first_n=options.stats_keep_first_n_columns,
            dense=options.stats_dense_store,
            fmt=self.file_format(level),
        )
        self._state.plans[key] = plan
        return plan

    @property
    def directory(self) -> str:
        """The bucket's directory in the table (files may go to an external path instead)."""
        return self.paths.directory

    def new_file(self, level: int = 0) -> NewFile:
        """Name and place the next file (at ``level``: its format names it); it is removed with
        the writer's files on abort."""
        new = self.paths.new_file(self.prefix, self.file_format(level).name)
        self._by_name[new.name] = new
        self.written.append(new.path)
        return new

    def located(self, meta: DataFileMeta) -> DataFileMeta:
        """``meta`` with the ``_EXTERNAL_PATH`` of the file this writer wrote under its name."""
        new = self._by_name.get(meta.file_name)
        return replace(meta, external_path=new.external_path) if new is not None and new.external_path else meta

    # -- file indexes (Paimon's DataFileIndexWriter) ----------------------------------------------
    def file_index_builder(self) -> FileIndexBuilder | None:
        """A builder of the index blob of one new data file, fed the file's rows (user columns)
        as they are written; None when the table asks for no index, or for changelog files
        (Paimon indexes data files only). Raises ``OptionError`` for refused index options."""
        if self.is_changelog:
            return None
        spec = self._state.file_index()
        return None if spec.empty else FileIndexBuilder(spec, self._state.types)

    def finish_file_index(self, meta: DataFileMeta, builder: FileIndexBuilder | None) -> DataFileMeta:
        """``meta`` with its index: embedded in the manifest entry up to
        ``file-index.in-manifest-threshold`` bytes, else written to ``<data file>.index`` beside
        the data file and named in its extra files."""
        if builder is None:
            return meta
        blob = builder.to_bytes()
        if len(blob) <= builder.spec.in_manifest_threshold:
            return replace(meta, embedded_file_index=blob)
        new = self._by_name.get(meta.file_name)
        data_path = new.path if new is not None else f"{self.directory}/{meta.file_name}"
        index_name = meta.file_name + INDEX_FILE_SUFFIX
        index_path = data_path + INDEX_FILE_SUFFIX
        self.written.append(index_path)
        with self.file_io.open_output(index_path) as out:
            out.write(blob)
        return replace(meta, extra_files=(*meta.extra_files, index_name))

    def with_file_index(self, meta: DataFileMeta, rows: pa.Table) -> DataFileMeta:
        """``meta`` with the index of a data file holding ``rows`` (see ``finish_file_index``)."""
        builder = self.file_index_builder()
        if builder is not None:
            builder.add(rows)
        return self.finish_file_index(meta, builder)

    def _new_path(self, level: int) -> tuple[str, str]:
        new = self.paths.new_file(self.prefix, self.file_format(level).name)
        self._by_name[new.name] = new
        return new.name, new.path

    def _write_files(self, table: pa.Table, level: int) -> list[tuple[str, WrittenFile]]:
        names: list[str] = []

        def next_path() -> str:
            name, path = self._new_path(level)
            names.append(name)
            self.written.append(path)
            return path

        files = write_rolling(
            self.file_format(level),
            self.file_io,
            next_path,
            table,
            target_size=self._state.target_file_size,
            group_rows_max=ROW_GROUP_ROWS,
            compression=self.compression(level),
            zstd_level=self._state.zstd_level,
        )
        return list(zip(names, files, strict=False))

    def write_kv(self, rows: pa.Table, *, level: int, file_source: int = FILE_SOURCE_APPEND) -> list[DataFileMeta]:
        """``rows``: user columns + _SEQUENCE_NUMBER + _VALUE_KIND, sorted by key (unique keys
        for data files). Rolled into files of ``target-file-size``."""
        if rows.num_rows == 0:
            return []
        columns = [rows.column(k) for k in self._key_names]
        columns += [rows.column(SEQUENCE_NUMBER), rows.column(VALUE_KIND)]
        columns += [rows.column(f.name) for f in self._user_schema]
        file_schema = self._state.kv_schema()
        table = pa.Table.from_arrays(columns, schema=file_schema)
        out = []
        for name, written in self._write_files(table, level):
            chunk = rows.slice(written.offset, written.rows)
            out.append(self.located(self.with_file_index(self._kv_meta(name, written, chunk, level, file_source), chunk)))
        return out

    def _kv_meta(self, name: str, written: WrittenFile, rows: pa.Table, level: int, file_source: int) -> DataFileMeta:
        bounds = pc.min_max(rows.column(SEQUENCE_NUMBER))
        keys = sorted_key_bounds(rows, self._key_names, self._key_types, self.file_format(level))
        plan = self.value_stats_plan(level)
        return DataFileMeta(
            file_name=name,
            file_size=written.size,
            row_count=rows.num_rows,
            min_key=keys.min_key,
            max_key=keys.max_key,
            key_stats=keys.stats,
            value_stats=plan.stats(rows),
            value_stats_cols=plan.stats_cols,
            min_sequence_number=bounds["min"].as_py(),
            max_sequence_number=bounds["max"].as_py(),
            schema_id=self.schema.id,
            level=level,
            creation_time_ms=int(time.time() * 1000),
            delete_row_count=retract_count(rows.column(VALUE_KIND)),
            file_source=file_source,
        )

    def write_append(self, rows: pa.Table, *, first_sequence: int, file_source: int = FILE_SOURCE_APPEND) -> list[DataFileMeta]:
        if rows.num_rows == 0:
            return []
        file_schema = self._state.append_schema()
        table = pa.Table.from_arrays([rows.column(f.name) for f in self._user_schema], schema=file_schema)
        plan = self.value_stats_plan(0)
        out = []
        for name, written in self._write_files(table, 0):
            chunk = rows.slice(written.offset, written.rows)
            seq = first_sequence + written.offset
            out.append(
                DataFileMeta(
                    file_name=name,
                    file_size=written.size,
                    row_count=chunk.num_rows,
                    min_key=EMPTY_ROW,
                    max_key=EMPTY_ROW,
                    key_stats=EMPTY_STATS,
                    value_stats=plan.stats(chunk),
                    value_stats_cols=plan.stats_cols,
                    min_sequence_number=seq,
                    max_sequence_number=seq + chunk.num_rows - 1,
                    schema_id=self.schema.id,
                    level=0,
                    creation_time_ms=int(time.time() * 1000),
                    delete_row_count=0,
                    file_source=file_source,
                )
            )
        return [self.located(self.with_file_index(m, rows.slice(m.min_sequence_number - first_sequence, m.row_count))) for m in out]

    def delete_file(self, file_name: str) -> None:
        """Remove a file this writer wrote, with its index file if it has one."""
        new = self._by_name.get(file_name)
        path = new.path if new is not None else f"{self.directory}/{file_name}"
        for p in (path, path + INDEX_FILE_SUFFIX):
            if p == path or p in self.written:
                self.file_io.delete(p)
            if p in self.written:
                self.written.remove(p)

    def delete_written(self) -> None:
        for path in self.written:
            self.file_io.delete(path)
        self.written.clear()
