"""Compaction of row-tracking append tables (``row-tracking.enabled`` without data evolution), as
Paimon 2.0's core append compaction writes it (``AppendFileStoreWrite`` reads its inputs with the
row-tracking fields): each row keeps its ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` as physical columns
of the new file (field ids 2147483642 and 2147483646), whose ``_WRITE_COLS`` are the table's
columns plus those two and whose ``_FIRST_ROW_ID`` is null; value statistics cover all of them;
its sequence range is its rows'. The commit gives such a COMPACT file no new row ids (Paimon's
``RowTrackingCommitUtils``), and readers take the row ids from the columns."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from lakestore.format.binary_row import EMPTY_ROW
from lakestore.format.file_format import write_rolling
from lakestore.format.kv import SEQUENCE_NUMBER_FIELD_ID
from lakestore.format.parquet import ROW_GROUP_ROWS
from lakestore.format.types import parse_type
from lakestore.meta.commit_message import CompactResult
from lakestore.meta.manifest import FILE_SOURCE_COMPACT, DataFileMeta
from lakestore.meta.stats import EMPTY_STATS, value_stats_plan
from lakestore.read.data_evolution import ROW_TRACKING_COLUMNS
from lakestore.write.file_writer import DataFileWriter

ROW_ID_FIELD_ID = 2147483647 - 5  # Paimon's SpecialFields.ROW_ID
_FIELD_IDS = {"_ROW_ID": ROW_ID_FIELD_ID, "_SEQUENCE_NUMBER": SEQUENCE_NUMBER_FIELD_ID}
_BIGINT = parse_type("BIGINT NOT NULL")


def compact_row_tracking(
    files: Sequence[DataFileMeta], *, read_file: Callable[[DataFileMeta], pa.Table], writer: DataFileWriter, rewrite_single: bool = False
) -> CompactResult:
    """Concatenate ``files`` (at least two, or one with ``rewrite_single``); ``read_file``: a
    file's rows with the table's columns and ``_ROW_ID``, ``_SEQUENCE_NUMBER``."""
    result = CompactResult()
    if len(files) < (1 if rewrite_single else 2):
        return result
    rows = pa.concat_tables([read_file(f) for f in files])
    result.before.extend(files)
    result.after.extend(_write(rows, writer))
    return result


def _write(rows: pa.Table, writer: DataFileWriter) -> list[DataFileMeta]:
    schema = writer.schema
    options = writer.options
    user = schema.arrow_schema()
    fields = [f.with_metadata({b"PARQUET:field_id": str(schema.field(f.name).id).encode()}) for f in user]
    for name in ROW_TRACKING_COLUMNS:
        fields.append(pa.field(name, pa.int64(), nullable=False, metadata={b"PARQUET:field_id": str(_FIELD_IDS[name]).encode()}))
    file_schema = pa.schema(fields)
    table = pa.Table.from_arrays([rows.column(f.name).cast(f.type) for f in fields], schema=file_schema)
    names = [f.name for f in fields]
    plan = value_stats_plan(
        names,
        [f.type for f in schema.fields] + [_BIGINT, _BIGINT],
        mode=options.stats_mode,
        field_modes=options.field_stats_modes,
        keep_first_n=options.stats_keep_first_n_columns,
        dense=options.stats_dense_store,
        fmt=writer.file_format(0),
    )
    written_names: list[str] = []

    def next_path() -> str:
        new = writer.new_file()
        written_names.append(new.name)
        return new.path

    written = write_rolling(
        writer.file_format(0),
        writer.file_io,
        next_path,
        table,
        target_size=options.target_file_size,
        group_rows_max=ROW_GROUP_ROWS,
        compression=writer.compression(0),
        zstd_level=options.file_compression_zstd_level,
    )
    out = []
    for name, w in zip(written_names, written, strict=True):
        chunk = table.slice(w.offset, w.rows)
        bounds = pc.min_max(chunk.column("_SEQUENCE_NUMBER"))
        meta = DataFileMeta(
            file_name=name,
            file_size=w.size,
            row_count=w.rows,
            min_key=EMPTY_ROW,
            max_key=EMPTY_ROW,
            key_stats=EMPTY_STATS,
            value_stats=plan.stats(chunk),
            value_stats_cols=plan.stats_cols,
            min_sequence_number=bounds["min"].as_py(),
            max_sequence_number=bounds["max"].as_py(),
            schema_id=schema.id,
            level=0,
            creation_time_ms=int(time.time() * 1000),
            delete_row_count=0,
            file_source=FILE_SOURCE_COMPACT,
            first_row_id=None,
            write_cols=tuple(names),
        )
        out.append(writer.located(writer.with_file_index(meta, chunk)))
    return out
