"""Reading one data file (``read_data_file``, any format). Parquet files are opened through the
table's FileIO as a ``pq.ParquetFile`` (``pq.read_table`` goes through ``pyarrow.dataset``, whose first use imports pandas: ~0.3 s of a
process's first read), with the row groups whose statistics cannot match a predicate skipped."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lakestore.errors import CorruptMetadataError
from lakestore.format.formats import format_of_file
from lakestore.format.parquet import PARQUET, open_parquet_file
from lakestore.io.fileio import FileIO
from lakestore.read.predicate import Predicate, Stats

# Arrow types whose parquet min/max statistics compare with predicate literals exactly as the
# rows do. Floats are left out (NaN is outside min/max but matches '!='), so are timestamps and
# decimals (units and scales of the Python values).
_PRUNABLE = (pa.types.is_integer, pa.types.is_string, pa.types.is_large_string, pa.types.is_date32, pa.types.is_boolean)


@dataclass
class ReadCounters:
    """What reads actually opened (a reader's running totals; shared by its threads)."""

    files: int = 0
    row_groups_read: int = 0
    row_groups_skipped: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, *, files: int = 0, read: int = 0, skipped: int = 0) -> None:
        with self._lock:
            self.files += files
            self.row_groups_read += read
            self.row_groups_skipped += skipped


def prunable(arrow_type: pa.DataType) -> bool:
    return any(check(arrow_type) for check in _PRUNABLE)


def open_parquet(file_io: FileIO, path: str) -> pq.ParquetFile:
    """Raises ``FileNotFoundError``, ``CorruptMetadataError``."""
    return open_parquet_file(file_io, path)


def _statistics(metadata: pq.FileMetaData, group: int, columns: Mapping[str, int]) -> Stats:
    """Predicate column -> (min, max, null count, rows) of one row group, where known."""
    rg = metadata.row_group(group)
    out: dict[str, tuple[Any, Any, int | None, int]] = {}
    for name, index in columns.items():
        stats = rg.column(index).statistics
        if stats is None:
            continue
        nulls = stats.null_count if stats.has_null_count else None
        if stats.has_min_max:
            out[name] = (stats.min, stats.max, nulls, rg.num_rows)
        elif nulls is not None and nulls == rg.num_rows:
            out[name] = (None, None, nulls, rg.num_rows)
    return out


def matching_row_groups(metadata: pq.FileMetaData, predicate: Predicate | None, stats_columns: Mapping[str, str]) -> list[int]:
    """Row groups that may hold rows matching ``predicate``. ``stats_columns``: predicate column ->
    the file column whose statistics stand for it (only columns whose statistics are exact)."""
    groups = list(range(metadata.num_row_groups))
    if predicate is None or not stats_columns or metadata.num_row_groups == 0:
        return groups
    leaves = {metadata.schema.column(i).path: i for i in range(metadata.num_columns)}
    columns = {name: leaves[source] for name, source in stats_columns.items() if source in leaves}
    if not columns:
        return groups
    return [g for g in groups if predicate.might_match(_statistics(metadata, g, columns))]


def read_parquet_file(
    file_io: FileIO,
    path: str,
    columns: Sequence[str],
    *,
    predicate: Predicate | None = None,
    stats_columns: Mapping[str, str] | None = None,
    row_limit: int | None = None,
    counters: ReadCounters | None = None,
) -> tuple[pa.Table, int]:
    """``columns`` of the row groups that may match ``predicate`` (all of them without one), and
    the file's total row count. ``row_limit``: stop after the row group that reaches it."""
    with open_parquet(file_io, path) as pf:
        try:
            metadata = pf.metadata
            # ParquetFile.read skips unknown names silently: a damaged footer must not pass.
            missing = set(columns) - set(pf.schema_arrow.names)
            if missing:
                raise CorruptMetadataError(path, f"lacks columns {sorted(missing)}")
            groups = matching_row_groups(metadata, predicate, stats_columns or {})
            if row_limit is not None:
                kept, rows = [], 0
                for g in groups:
                    if rows >= row_limit:
                        break
                    kept.append(g)
                    rows += metadata.row_group(g).num_rows
                groups = kept
            if counters is not None:
                counters.add(files=1, read=len(groups), skipped=metadata.num_row_groups - len(groups))
            if len(groups) == metadata.num_row_groups:
                table = pf.read(columns=list(columns), use_threads=False)
            else:
                table = pf.read_row_groups(groups, columns=list(columns), use_threads=False)
        except (pa.ArrowInvalid, pa.ArrowIOError, OSError, KeyError) as exc:
            raise CorruptMetadataError(path, f"unreadable parquet: {exc}") from exc
        return table, metadata.num_rows


def read_data_file(
    file_io: FileIO,
    path: str,
    columns: Sequence[str],
    *,
    predicate: Predicate | None = None,
    stats_columns: Mapping[str, str] | None = None,
    row_limit: int | None = None,
    counters: ReadCounters | None = None,
) -> tuple[pa.Table, int]:
    """A data file of any format lakestore reads (its format from its name): ``columns`` and the
    file's row count. Parquet files skip the row groups ``predicate`` rules out and stop at
    ``row_limit`` (``read_parquet_file``); other formats read every row. Raises
    ``FileNotFoundError``, ``CorruptMetadataError``, ``UnsupportedTableError`` (a format lakestore
    does not read), ``UnsupportedTypeError``."""
    fmt = format_of_file(path)
    if fmt is PARQUET:
        return read_parquet_file(
            file_io, path, columns, predicate=predicate, stats_columns=stats_columns, row_limit=row_limit, counters=counters
        )
    table, rows = fmt.read(file_io, path, columns)
    if counters is not None:
        counters.add(files=1, read=1)
    return table, rows
