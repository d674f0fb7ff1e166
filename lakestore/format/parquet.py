"""Parquet data files: written to a temporary name and published, read with projection."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from lakestore.errors import CorruptMetadataError
from lakestore.io.fileio import FileIO


def write_parquet(file_io: FileIO, path: str, table: pa.Table, *, compression: str = "zstd") -> int:
    """Write ``table`` as one parquet file; returns its size in bytes."""
    with file_io.open_output(path) as sink:
        pq.write_table(
            table,
            sink,
            compression=None if compression == "none" else compression,
            write_statistics=True,
            row_group_size=1 << 20,
            store_schema=False,
            write_page_checksum=True,  # readers verify CRCs: a flipped byte raises, never reads silently
        )
    return file_io.file_size(path)


ROW_GROUP_ROWS = 128 * 1024


@dataclass(frozen=True, slots=True)
class WrittenFile:
    path: str
    size: int
    offset: int  # first row of the input table in this file
    rows: int


def write_parquet_rolling(file_io: FileIO, next_path: Callable[[], str], table: pa.Table, *, target_size: int, compression: str = "zstd") -> list[WrittenFile]:
    """Write ``table`` into as many files as needed, rolling to a new file once a file's actual
    size on disk reaches ``target_size`` (checked after every row group)."""
    out: list[WrittenFile] = []
    offset, total = 0, table.num_rows
    # Row groups of at most ~target bytes in memory (parquet is smaller), so a file overshoots
    # the target by less than one row group.
    per_row = max(1, table.nbytes // max(1, total))
    group_rows = int(min(ROW_GROUP_ROWS, max(256, target_size // per_row)))
    while offset < total or not out:
        path = next_path()
        start = offset
        with file_io.open_output(path) as sink:
            writer = pq.ParquetWriter(
                sink, table.schema, compression=None if compression == "none" else compression,
                write_statistics=True, store_schema=False, write_page_checksum=True,
            )
            while offset < total:
                chunk = table.slice(offset, group_rows)
                writer.write_table(chunk, row_group_size=group_rows)
                offset += chunk.num_rows
                if sink.tell() >= target_size:
                    break
            writer.close()
        out.append(WrittenFile(path, file_io.file_size(path), start, offset - start))
        if total == 0:
            break
    return out


def read_parquet(file_io: FileIO, path: str, *, columns: Sequence[str] | None = None) -> pa.Table:
    try:
        return pq.read_table(file_io.arrow_path(path), columns=list(columns) if columns is not None else None, filesystem=file_io.arrow_filesystem(), use_threads=False, page_checksum_verification=True)
    except FileNotFoundError:
        raise
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError) as exc:
        raise CorruptMetadataError(path, f"unreadable parquet: {exc}") from exc
