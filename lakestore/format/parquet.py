"""Parquet data files (``ParquetFormat``): written to a temporary name and published, read with
projection. Row-group pruning by predicate lives in ``lakestore.read.parquet_read``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from lakestore.errors import CorruptMetadataError
from lakestore.format.file_format import FileFormat, FormatWriter, StatsKind, WrittenFile, timestamp_arrays, write_rolling
from lakestore.format.kv import KEY_PREFIX
from lakestore.format.types import DataType
from lakestore.io.fileio import FileIO

ROW_GROUP_ROWS = 1 << 20
# Parquet codecs Paimon's writers name (``none`` writes uncompressed files); lzo is not among them
# because pyarrow cannot write it. brotli only on tables another engine created (lakestore/meta/options.py).
PARQUET_CODECS = ("zstd", "snappy", "lz4", "lz4_raw", "gzip", "brotli", "none", "uncompressed")
_LOCAL_BUFFER = 1 << 16

_SAMPLE_ROWS = 4096


def encoding_options(table: pa.Table) -> dict[str, list[str]]:
    """Dictionary-encode only strings and binaries, and of a table of more than a sample's rows
    only those that repeat in the sample: a column of distinct values pays for a dictionary that
    the writer abandons at its size limit (~15% of the encoding time). Small files keep their
    dictionaries, so their sizes (compared by compaction's size ratios) stay like Paimon Java's.
    Page statistics only for the sorted key columns, the ones row-group pruning can use
    (manifests carry every column's statistics). Together ~2.5x faster than pyarrow's defaults
    at a similar size. Encodings stay PLAIN or dictionary, which every Paimon reader decodes."""
    sample = table.slice(0, _SAMPLE_ROWS) if table.num_rows > _SAMPLE_ROWS else None
    dictionary = [
        f.name
        for f in table.schema
        if (pa.types.is_string(f.type) or pa.types.is_binary(f.type) or pa.types.is_large_string(f.type))
        and (sample is None or len(pc.unique(sample.column(f.name))) * 2 <= _SAMPLE_ROWS)
    ]
    statistics = [f.name for f in table.schema if f.name.startswith(KEY_PREFIX)]
    return {"use_dictionary": dictionary, "write_statistics": statistics}


def compression_options(compression: str, zstd_level: int = 1) -> dict[str, object]:
    """pyarrow's arguments for Paimon's ``file.compression`` (``none``/``uncompressed``: no codec)
    and ``file.compression.zstd-level`` (Paimon's default 1)."""
    if compression in ("none", "uncompressed"):
        return {"compression": None}
    if compression == "zstd":
        return {"compression": "zstd", "compression_level": zstd_level}
    return {"compression": compression}


def _has_nanoseconds(t: pa.DataType) -> bool:
    if pa.types.is_timestamp(t):
        return t.unit == "ns"
    return any(_has_nanoseconds(t.field(i).type) for i in range(t.num_fields))


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000}
_NS_SECONDS = (2**63 - 1) // 1_000_000_000  # what a nanosecond timestamp spans either side of 1970


def _fits_nanoseconds(table: pa.Table) -> bool:
    """Whether every coarser-than-nanosecond timestamp in ``table`` lies in the range of
    nanosecond timestamps (INT96 values are read back as nanoseconds)."""
    for column in table.columns:
        if not _has_timestamp(column.type):
            continue
        for leaf in timestamp_arrays(column.combine_chunks()):
            unit = leaf.type.unit
            if unit == "ns" or leaf.null_count == len(leaf):
                continue
            bounds = pc.min_max(leaf.cast(pa.int64()))
            limit = _NS_SECONDS * _PER_SECOND[unit]
            if bounds["min"].as_py() < -limit or bounds["max"].as_py() > limit:
                return False
    return True


def _has_timestamp(t: pa.DataType) -> bool:
    if pa.types.is_timestamp(t):
        return True
    return any(_has_timestamp(t.field(i).type) for i in range(t.num_fields))


def uses_int96(table: pa.Table) -> bool:
    """Paimon 2.0 writes TIMESTAMP(7..9) and TIMESTAMP_LTZ(7..9) as INT96 (its
    ParquetSchemaConverter), which Paimon 1.x reads right and INT64 nanoseconds it misreads.
    pyarrow writes INT96 for every timestamp column of a file or for none, and reads INT96 as
    nanoseconds: a file with a nanosecond column has all its timestamps as INT96 (Paimon reads
    INT96 at any precision), unless one of its coarser timestamps lies outside the years
    1677..2262 that nanoseconds span; then the file keeps INT64 timestamps (nanoseconds as
    TIMESTAMP(NANOS), which Paimon 2.0 reads and 1.x does not)."""
    return any(_has_nanoseconds(f.type) for f in table.schema) and _fits_nanoseconds(table)


def writer_options(table: pa.Table, compression: str, zstd_level: int = 1) -> dict[str, object]:
    """Every ``pq.ParquetWriter`` argument of a data file but the sink and schema."""
    return {
        **compression_options(compression, zstd_level),
        "store_schema": False,
        "write_page_checksum": True,
        **encoding_options(table),
        "use_deprecated_int96_timestamps": uses_int96(table),
    }


class _ParquetWriter(FormatWriter):
    def __init__(self, sink: pa.NativeFile, table: pa.Table, compression: str, zstd_level: int) -> None:
        options = writer_options(table, compression, zstd_level)
        self.int96 = bool(options["use_deprecated_int96_timestamps"])
        self._writer = pq.ParquetWriter(sink, table.schema, **options)

    def write(self, table: pa.Table, group_rows: int) -> None:
        self._writer.write_table(table, row_group_size=group_rows)

    def accepts(self, table: pa.Table) -> bool:
        # INT96 holds none of a batch's timestamps that lakestore reads back right: a new file
        return not self.int96 or uses_int96(table)

    def close(self) -> None:
        self._writer.close()


def open_parquet_file(file_io: FileIO, path: str) -> pq.ParquetFile:
    """A ``pq.ParquetFile`` through ``file_io`` (``pq.read_table`` goes through
    ``pyarrow.dataset``, whose first use imports pandas). Raises ``FileNotFoundError``,
    ``CorruptMetadataError``."""
    filesystem = file_io.arrow_filesystem()
    # Local files: a buffered stream instead of pre-buffering whole column chunks (coalesced
    # ranged reads pay off on object stores; locally they only add memory to allocate and
    # fault in, a third of a process's first read of the merge benchmark).
    local = isinstance(filesystem, pafs.LocalFileSystem)
    try:
        return pq.ParquetFile(
            file_io.arrow_path(path),
            filesystem=filesystem,
            page_checksum_verification=True,
            pre_buffer=not local,
            buffer_size=_LOCAL_BUFFER if local else 0,
        )
    except FileNotFoundError:
        raise
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError) as exc:
        raise CorruptMetadataError(path, f"unreadable parquet: {exc}") from exc


class ParquetFormat(FileFormat):
    """Parquet as Paimon writes it (ParquetWriterFactory, ParquetSimpleStatsExtractor)."""

    name = "parquet"
    codecs = PARQUET_CODECS

    def open_writer(self, sink: pa.NativeFile, table: pa.Table, *, compression: str, zstd_level: int, target_size: int) -> FormatWriter:
        return _ParquetWriter(sink, table, self.check_codec(compression), zstd_level)

    def read(self, file_io: FileIO, path: str, columns: Sequence[str]) -> tuple[pa.Table, int]:
        with open_parquet_file(file_io, path) as pf:
            try:
                missing = set(columns) - set(pf.schema_arrow.names)
                if missing:  # ParquetFile.read skips unknown names silently: a damaged footer must not pass
                    raise CorruptMetadataError(path, f"lacks columns {sorted(missing)}")
                return pf.read(columns=list(columns), use_threads=False), pf.metadata.num_rows
            except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError) as exc:
                raise CorruptMetadataError(path, f"unreadable parquet: {exc}") from exc

    def batches(self, source: pa.NativeFile, path: str, columns: Sequence[str], batch_rows: int) -> tuple[int, Iterator[pa.RecordBatch]]:
        try:
            parquet = pq.ParquetFile(source, page_checksum_verification=True)
            rows = parquet.metadata.num_rows
        except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError) as exc:
            raise CorruptMetadataError(path, f"unreadable parquet: {exc}") from exc

        def stream() -> Iterator[pa.RecordBatch]:
            try:
                yield from parquet.iter_batches(batch_size=batch_rows, columns=list(columns), use_threads=False)
            except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError) as exc:
                raise CorruptMetadataError(path, f"unreadable parquet: {exc}") from exc

        return rows, stream()

    def stats_kind(self, dtype: DataType) -> StatsKind:
        # ParquetSimpleStatsExtractor: nothing for nested columns, null counts for TIMESTAMP(p > 6)
        if dtype.is_nested:
            return "none"
        if dtype.is_timestamp and (dtype.precision or 0) > 6:
            return "counts"
        return "full"


PARQUET = ParquetFormat()


def write_parquet_rolling(
    file_io: FileIO,
    next_path: Callable[[], str],
    table: pa.Table,
    *,
    target_size: int,
    compression: str = "zstd",
    zstd_level: int = 1,
) -> list[WrittenFile]:
    """Write ``table`` into parquet files rolled at ``target_size`` (``file_format.write_rolling``)."""
    return write_rolling(
        PARQUET,
        file_io,
        next_path,
        table,
        target_size=target_size,
        group_rows_max=ROW_GROUP_ROWS,
        compression=compression,
        zstd_level=zstd_level,
    )
