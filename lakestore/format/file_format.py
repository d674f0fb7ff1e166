"""The data-file format abstraction: what a reader, writer, statistics or compaction asks of a
format, whichever one a file is in. Paimon picks a new file's format from ``file.format`` (per
level ``file.format.per.level``, changelog files ``changelog-file.format``) and an existing
file's from its name (``DataFilePathFactory.formatIdentifier``): lakestore does the same through
``lakestore.format.formats``, so tables whose ``file.format`` changed read old and new files alike.

Implementations: ``lakestore.format.parquet.ParquetFormat`` and ``lakestore.format.orc.OrcFormat``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import pyarrow as pa

from lakestore.errors import OptionError
from lakestore.format.arrow_ops import min_max
from lakestore.format.types import DataType
from lakestore.io.fileio import FileIO

# What a format's file statistics give a column (Paimon takes value statistics from the file's
# own statistics: ParquetSimpleStatsExtractor, OrcSimpleStatsExtractor): min/max and null count,
# only the null count, or nothing.
StatsKind = Literal["full", "counts", "none"]

# Extensions Paimon's formatIdentifier skips (HadoopCompressionType), as in ``data.zst.parquet``.
COMPRESSION_EXTENSIONS = frozenset({"gz", "bz2", "deflate", "lz4", "lzo", "snappy", "zst", "zstd", "br"})


def format_identifier(file_name: str) -> str:
    """Paimon's ``DataFilePathFactory.formatIdentifier``: a file name's extension, past a
    compression extension (``data-<uuid>-0.zst.parquet`` -> ``parquet``), lower-cased."""
    parts = file_name.rsplit("/", 1)[-1].rsplit(".", 2)
    if len(parts) == 3 and parts[2].lower() in COMPRESSION_EXTENSIONS:
        return parts[1].lower()
    return parts[-1].lower() if len(parts) > 1 else ""


def timestamp_arrays(array: pa.Array) -> Iterator[pa.Array]:
    """The timestamp arrays inside ``array`` (itself, or nested in structs, lists and maps)."""
    t = array.type
    if pa.types.is_timestamp(t):
        yield array
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from timestamp_arrays(array.field(i))
    elif pa.types.is_map(t):
        yield from timestamp_arrays(array.keys)
        yield from timestamp_arrays(array.items)
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        yield from timestamp_arrays(array.flatten())


def rows_only(rows: int) -> pa.Table:
    """A table of ``rows`` rows and no columns (a read of no columns still counts its rows)."""
    return pa.table({"_": pa.nulls(rows)}).drop_columns(["_"])


@dataclass(frozen=True, slots=True)
class WrittenFile:
    path: str
    size: int
    offset: int  # first row of the input table in this file
    rows: int


class FormatWriter(ABC):
    """One data file being written: tables appended in order, then closed."""

    @abstractmethod
    def write(self, table: pa.Table, group_rows: int) -> None:
        """Append ``table`` (row groups / stripes of about ``group_rows`` rows)."""

    def accepts(self, table: pa.Table) -> bool:
        """Whether ``table`` may go into this file (False: close it and start another)."""
        return True

    @abstractmethod
    def close(self) -> None:
        """Finish the file (footer); the sink stays open."""


class FileFormat(ABC):
    """A data-file format: its name (``file.format``), codecs, writer, readers and what its file
    statistics give each column type."""

    name: str
    codecs: tuple[str, ...]  # ``file.compression`` values it writes

    @property
    def extension(self) -> str:
        return f".{self.name}"

    @abstractmethod
    def open_writer(self, sink: pa.NativeFile, table: pa.Table, *, compression: str, zstd_level: int, target_size: int) -> FormatWriter:
        """A writer of files with ``table``'s schema into ``sink``; ``table`` is the first batch
        (its values may choose encodings). Raises ``OptionError`` for a codec the format lacks."""

    @abstractmethod
    def read(self, file_io: FileIO, path: str, columns: Sequence[str]) -> tuple[pa.Table, int]:
        """``columns`` of every row, and the file's row count. Raises ``FileNotFoundError``,
        ``CorruptMetadataError`` for an unreadable file, ``UnsupportedTypeError`` for values
        the reader cannot hold."""

    @abstractmethod
    def batches(self, source: pa.NativeFile, path: str, columns: Sequence[str], batch_rows: int) -> tuple[int, Iterator[pa.RecordBatch]]:
        """The file's row count and its ``columns`` in batches of at most ``batch_rows`` rows.
        Raises as ``read``."""

    @abstractmethod
    def stats_kind(self, dtype: DataType) -> StatsKind:
        """What Paimon's statistics extractor of this format records for a column of ``dtype``."""

    def min_max(self, column: pa.ChunkedArray | pa.Array, arrow_type: pa.DataType) -> pa.Array:
        """[min, max] of a column holding a non-null value, as the format's writer records them
        (the default: Arrow's, which skips NaN)."""
        return min_max(column, arrow_type)

    def stats_pair(self, dtype: DataType, pair: pa.Array) -> pa.Array:
        """A column's [min, max] as the format's file statistics hold them (before a stats
        mode truncates them); the default keeps them."""
        return pair

    def check_codec(self, compression: str) -> str:
        """``compression`` if the format writes it, else raises ``OptionError``."""
        codec = compression.strip().lower()
        if codec not in self.codecs:
            raise OptionError(f"file.compression={compression} is not a codec of {self.name} files (one of {', '.join(self.codecs)})")
        return codec


def write_rolling(
    fmt: FileFormat,
    file_io: FileIO,
    next_path: Callable[[], str],
    table: pa.Table,
    *,
    target_size: int,
    group_rows_max: int,
    compression: str,
    zstd_level: int,
) -> list[WrittenFile]:
    """Write ``table`` in format ``fmt`` into as many files as needed, rolling to a new file once a
    file's actual size on disk reaches ``target_size`` (checked after every row group / stripe)."""
    out: list[WrittenFile] = []
    offset, total = 0, table.num_rows
    # Row groups of at most ~target bytes in memory (files are smaller), so a file overshoots
    # the target by less than one row group.
    per_row = max(1, table.nbytes // max(1, total))
    group_rows = int(min(group_rows_max, max(256, target_size // per_row)))
    while offset < total or not out:
        path = next_path()
        start = offset
        with file_io.open_output(path) as sink:
            writer = fmt.open_writer(sink, table, compression=compression, zstd_level=zstd_level, target_size=target_size)
            while offset < total:
                chunk = table.slice(offset, group_rows)
                writer.write(chunk, group_rows)
                offset += chunk.num_rows
                if sink.tell() >= target_size:
                    break
            writer.close()
        out.append(WrittenFile(path, file_io.file_size(path), start, offset - start))
        if total == 0:
            break
    return out
