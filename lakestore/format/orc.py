"""ORC data files (``OrcFormat``) as Paimon writes them, on pyarrow's ORC reader and writer.

Paimon's ORC types (``OrcTypeUtil``): BOOLEAN boolean, TINYINT byte, SMALLINT short, INT int,
BIGINT long, FLOAT float, DOUBLE double, CHAR/VARCHAR/STRING string, BINARY/VARBINARY binary,
DATE date, DECIMAL(p, s) decimal(p, s), TIME int (milliseconds of the day), TIMESTAMP(p)
timestamp, TIMESTAMP_LTZ(p) timestamp with local time zone (both seconds + nanoseconds),
ARRAY list, MAP map, ROW struct; every type carries its field id in the ``paimon.id`` attribute
(the ids lakestore gives parquet's field ids, nested ones included). The primary-key layout
(``_KEY_<k>``, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``) is the same as parquet's.

Statistics (``OrcSimpleStatsExtractor``): min/max and null counts from the file's column
statistics, so binaries get only null counts, nested columns only null counts, timestamps of
every precision min/max, and a string min (max) longer than ORC's 1024 recorded bytes none.

pyarrow's ORC reader holds timestamps as nanoseconds: a file with a timestamp outside the years
1677..2262 cannot be read (``UnsupportedTypeError``), and lakestore refuses to write one. Paimon
Java's ORC reader fails on timestamps before 1970 with a fraction of a second that ORC's own
encoding gives them (and its writer stores them a second late): lakestore refuses to write those
too, so that every ORC file it writes reads the same in Java."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po

from lakestore.errors import CorruptMetadataError, UnsupportedTypeError
from lakestore.format.file_format import FileFormat, FormatWriter, StatsKind, rows_only, timestamp_arrays
from lakestore.format.types import DataType
from lakestore.io.fileio import FileIO

ORC_CODECS = ("zstd", "lz4", "snappy", "zlib", "none")
_ORC_COMPRESSION = {"zstd": "ZSTD", "lz4": "LZ4", "snappy": "SNAPPY", "zlib": "ZLIB", "none": "UNCOMPRESSED"}
STRIPE_SIZE = 64 << 20  # Paimon's (ORC's) orc.stripe.size
_MIN_STRIPE = 1 << 20
_BLOCK_SIZE = 128 << 10
_PARQUET_ID = b"PARQUET:field_id"
_PAIMON_ID = b"paimon.id"
_MAX_STATS_BYTES = 1024  # ORC's StringStatisticsImpl.MAX_BYTES_RECORDED
_NS_SECONDS = (2**63 - 1) // 1_000_000_000
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _orc_field(field: pa.Field) -> pa.Field:
    """``field`` as an ORC column: ``paimon.id`` attributes instead of parquet field ids, TIME as int."""
    metadata = field.metadata or {}
    if _PARQUET_ID in metadata:
        metadata = {(_PAIMON_ID if k == _PARQUET_ID else k): v for k, v in metadata.items()}
    return pa.field(field.name, _orc_type(field.type), nullable=field.nullable, metadata=metadata or None)


def _orc_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_time(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([_orc_field(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_orc_field(t.key_field), _orc_field(t.item_field), keys_sorted=t.keys_sorted)
    if pa.types.is_large_list(t):
        return pa.large_list(_orc_field(t.value_field))
    if pa.types.is_list(t):
        return pa.list_(_orc_field(t.value_field))
    return t


def orc_schema(schema: pa.Schema) -> pa.Schema:
    """A data file's Arrow schema as pyarrow writes it to ORC the way Paimon does."""
    return pa.schema([_orc_field(f) for f in schema])


def _has_timestamp(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t) or any(_has_timestamp(t.field(i).type) for i in range(t.num_fields))


def check_timestamps(table: pa.Table) -> None:
    """Raise ``UnsupportedTypeError`` when a timestamp of ``table`` lies outside what pyarrow's
    ORC reader holds (nanoseconds since 1970: the years 1677..2262)."""
    for name, column in zip(table.column_names, table.columns, strict=True):
        if not _has_timestamp(column.type):
            continue
        for chunk in column.chunks:
            for leaf in timestamp_arrays(chunk):
                if leaf.type.unit == "ns" or leaf.null_count == len(leaf):
                    continue
                values = leaf.cast(pa.int64())
                bounds = pc.min_max(values)
                per_second = _PER_SECOND[leaf.type.unit]
                limit = _NS_SECONDS * per_second
                if bounds["min"].as_py() < -limit or bounds["max"].as_py() > limit:
                    raise UnsupportedTypeError(
                        f"column {name!r} holds a timestamp outside the years 1677..2262, which lakestore's ORC reader"
                        " (pyarrow, nanoseconds) cannot read back: write such tables as parquet"
                    )
                if per_second > 1 and bounds["min"].as_py() < 0 and _fraction_before_1970(values, per_second):
                    raise UnsupportedTypeError(
                        f"column {name!r} holds a timestamp before 1970 with a fraction of a second, which Paimon Java's ORC"
                        " reader cannot read (nor its writer write): write such tables as parquet"
                    )


def _fraction_before_1970(values: pa.Array, per_second: int) -> bool:
    negative = values.filter(pc.less(values, 0))
    return bool(pc.any(pc.not_equal(pc.multiply(pc.divide(negative, per_second), per_second), negative)).as_py())


class _OrcWriter(FormatWriter):
    def __init__(self, sink: pa.NativeFile, table: pa.Table, compression: str, zstd_level: int, target_size: int) -> None:
        self._schema = orc_schema(table.schema)
        # columns whose type changes (TIME -> int); the others only take the ORC field metadata
        self._casts = [not f.type.equals(g.type) for f, g in zip(self._schema, table.schema, strict=True)]
        self._writer = po.ORCWriter(
            sink,
            compression=_ORC_COMPRESSION[compression],
            # pyarrow sets no zstd level: ORC's speed strategy is level 1 (Paimon's default), its
            # compression strategy a higher level
            compression_strategy="speed" if zstd_level <= 1 else "compression",
            compression_block_size=_BLOCK_SIZE,
            stripe_size=max(_MIN_STRIPE, min(STRIPE_SIZE, target_size)),
            row_index_stride=10000,
        )

    def write(self, table: pa.Table, group_rows: int) -> None:
        check_timestamps(table)
        columns = [c.cast(f.type) if cast else c for c, f, cast in zip(table.columns, self._schema, self._casts, strict=True)]
        self._writer.write(pa.Table.from_arrays([_unsliced(c) for c in columns], schema=self._schema))

    def close(self) -> None:
        self._writer.close()


def _unsliced(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """``column`` with its nested chunks copied to offset 0: pyarrow's ORC writer reads a sliced
    struct's validity from the start of its buffer (the nulls of other rows)."""
    if not pa.types.is_nested(column.type) or all(chunk.offset == 0 for chunk in column.chunks):
        return column
    chunks = [chunk.take(pa.array(np.arange(len(chunk)))) if chunk.offset else chunk for chunk in column.chunks]
    return pa.chunked_array(chunks, column.type)


def _first_is_nan(column: pa.ChunkedArray | pa.Array) -> bool:
    """Whether the first non-null value of a float column is NaN."""
    for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        if chunk.null_count == len(chunk):
            continue
        first = pc.index(chunk.is_valid(), True).as_py()
        return math.isnan(chunk[first].as_py())
    return False


def _read_error(path: str, exc: Exception) -> Exception:
    if "out of range for nanosecond resolution" in str(exc):
        return UnsupportedTypeError(f"{path}: a timestamp outside the years 1677..2262, which pyarrow's ORC reader cannot hold ({exc})")
    return CorruptMetadataError(path, f"unreadable orc: {exc}")


class OrcFormat(FileFormat):
    """ORC as Paimon writes it (OrcWriterFactory, OrcSimpleStatsExtractor)."""

    name = "orc"
    codecs = ORC_CODECS

    def open_writer(self, sink: pa.NativeFile, table: pa.Table, *, compression: str, zstd_level: int, target_size: int) -> FormatWriter:
        return _OrcWriter(sink, table, self.check_codec(compression), zstd_level, target_size)

    def _open(self, source: pa.NativeFile, path: str, columns: Sequence[str]) -> po.ORCFile:
        try:
            orc = po.ORCFile(source)
            names = orc.schema.names
        except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError, IndexError) as exc:
            raise CorruptMetadataError(path, f"unreadable orc: {exc}") from exc
        missing = set(columns) - set(names)
        if missing:
            raise CorruptMetadataError(path, f"lacks columns {sorted(missing)}")
        return orc

    def read(self, file_io: FileIO, path: str, columns: Sequence[str]) -> tuple[pa.Table, int]:
        with file_io.arrow_filesystem().open_input_file(file_io.arrow_path(path)) as source:
            orc = self._open(source, path, columns)
            try:
                rows = orc.nrows
                table = orc.read(columns=list(columns)).select(list(columns)) if columns else rows_only(rows)
            except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError, IndexError) as exc:
                raise _read_error(path, exc) from exc
        return table, rows

    def batches(self, source: pa.NativeFile, path: str, columns: Sequence[str], batch_rows: int) -> tuple[int, Iterator[pa.RecordBatch]]:
        orc = self._open(source, path, columns)

        def stream() -> Iterator[pa.RecordBatch]:
            if not columns:
                for offset in range(0, orc.nrows, batch_rows):
                    yield from rows_only(min(batch_rows, orc.nrows - offset)).to_batches()
                return
            try:
                for stripe in range(orc.nstripes):
                    batch = orc.read_stripe(stripe, columns=list(columns))
                    batch = pa.RecordBatch.from_arrays([batch.column(c) for c in columns], names=list(columns))
                    for offset in range(0, batch.num_rows, batch_rows):
                        yield batch.slice(offset, batch_rows)
            except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError, IndexError) as exc:
                raise _read_error(path, exc) from exc

        return orc.nrows, stream()

    def stats_kind(self, dtype: DataType) -> StatsKind:
        # OrcSimpleStatsExtractor: binaries and nested columns only have null counts
        if dtype.is_nested or dtype.is_binary:
            return "counts"
        return "full"

    def min_max(self, column: pa.ChunkedArray | pa.Array, arrow_type: pa.DataType) -> pa.Array:
        # ORC's DoubleStatisticsImpl starts from the first value and compares with < and >: a
        # NaN first stays min and max, a NaN later is skipped
        pair = super().min_max(column, arrow_type)
        if pa.types.is_floating(arrow_type) and _first_is_nan(column):
            return pa.array([math.nan, math.nan], arrow_type)
        return pair

    def stats_pair(self, dtype: DataType, pair: pa.Array) -> pa.Array:
        # ORC records a string bound longer than 1024 bytes only truncated, and reports no
        # minimum (maximum) then
        if not dtype.is_string or pair.null_count == len(pair):
            return pair
        too_long = pc.greater(pc.binary_length(pair), _MAX_STATS_BYTES)
        return pc.if_else(too_long, pa.nulls(len(pair), pair.type), pair) if pc.any(too_long).as_py() else pair


ORC = OrcFormat()
