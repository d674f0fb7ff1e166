"""Parquet data files: written to a temporary name and published, read with projection."""

from __future__ import annotations

from collections.abc import Sequence

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


def read_parquet(file_io: FileIO, path: str, *, columns: Sequence[str] | None = None) -> pa.Table:
    try:
        return pq.read_table(file_io.arrow_path(path), columns=list(columns) if columns is not None else None, filesystem=file_io.arrow_filesystem(), use_threads=False, page_checksum_verification=True)
    except FileNotFoundError:
        raise
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError) as exc:
        raise CorruptMetadataError(path, f"unreadable parquet: {exc}") from exc
