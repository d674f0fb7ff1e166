"""Column statistics (min, max, null count) as Paimon's SimpleStats, computed with Arrow kernels.

What a data file's value statistics hold follows Paimon 2.0 (``StatsCollectorFactories``,
``TruncateSimpleColStatsCollector``, ``SimpleStatsConverter``, ``ParquetSimpleStatsExtractor``):

- per column a mode: ``fields.<f>.stats-mode``, else ``metadata.stats-mode`` (per level:
  ``metadata.stats-mode.per.level``) for the first ``metadata.stats-keep-first-n-columns``
  columns (-1: all) and ``none`` after them; ``none`` keeps nothing, ``counts`` only the null count,
  ``full`` min/max/null count, ``truncate(N)`` (the default, N = 16) cuts strings to N code points
  and binaries to N bytes: the min is the prefix, the max the prefix with its last code point
  (byte) that can be incremented incremented; a max that cannot be incremented drops min and max.
  What a column can have at all depends on the file's format (``FileFormat.stats_kind``: Paimon
  takes the statistics from the file's own): parquet keeps nothing for nested columns and only
  null counts for TIMESTAMP(p > 6); ORC only null counts for binaries and nested columns, and no
  string bound longer than 1024 bytes. Key columns of primary-key files ``truncate(128)``.
- dense store (``metadata.stats-dense-store``, default true): ``_VALUE_STATS`` covers only the
  columns that have any statistic, named in ``_VALUE_STATS_COLS`` in schema order; null when that
  is every column, an empty list when it is none. Without dense store every column is present
  (``_VALUE_STATS_COLS`` null) and columns without statistics are null.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import from_pylist, indices
from lakestore.format.binary_row import encode_rows, encode_values
from lakestore.format.file_format import FileFormat
from lakestore.format.parquet import PARQUET
from lakestore.format.types import DataType
from lakestore.meta.manifest import SimpleStats

_NESTED_STANDIN = DataType("BIGINT")
EMPTY_STATS = SimpleStats(encode_values([], []), encode_values([], []), ())
KEY_STATS_MODE = "truncate(128)"  # Paimon's mode for the key (system) columns of primary-key files


def truncation(mode: str) -> int | None:
    """N of ``truncate(N)``, else None."""
    return int(mode[len("truncate(") : -1]) if mode.startswith("truncate(") else None


def truncate_min(value: Any, length: int) -> Any:
    """A lower bound of ``value`` at most ``length`` code points (bytes) long: its prefix."""
    return value[:length] if isinstance(value, (str, bytes)) else value


def truncate_max(value: Any, length: int) -> Any:
    """An upper bound of ``value`` at most ``length`` code points (bytes) long, or None when there
    is none: the prefix with its last code point (byte) that can be incremented incremented and
    what follows it dropped (Paimon's ``TruncateSimpleColStatsCollector.truncateMax``; Paimon
    steps from U+D7FF into the surrogates, which UTF-8 cannot hold, where lakestore steps to U+E000)."""
    if isinstance(value, str):
        if len(value) <= length:
            return value
        for i in range(length - 1, -1, -1):
            code = ord(value[i]) + 1
            if 0xD800 <= code <= 0xDFFF:
                code = 0xE000
            if code <= 0x10FFFF:
                return value[:i] + chr(code)
        return None
    if isinstance(value, bytes):
        if len(value) <= length:
            return value
        for i in range(length - 1, -1, -1):
            if value[i] != 0xFF:
                return value[:i] + bytes([value[i] + 1])
        return None
    return value


def _truncated_pair(pair: pa.Array, length: int) -> pa.Array:
    """[min, max] truncated to ``length``; both null when the max has no truncated upper bound."""
    if not (pa.types.is_string(pair.type) or pa.types.is_binary(pair.type) or pa.types.is_large_string(pair.type)):
        return pair
    low, high = pair.to_pylist()
    if high is None:  # Paimon's TruncateSimpleColStatsCollector.convert: no max, no bounds
        return pair if low is None else pa.nulls(2, pair.type)
    if (low is None or len(low) <= length) and len(high) <= length:
        return pair
    bound = truncate_max(high, length)
    if bound is None:
        return pa.nulls(2, pair.type)
    return pa.array([None if low is None else truncate_min(low, length), bound], pair.type)


def has_stats(mode: str, dtype: DataType, fmt: FileFormat = PARQUET) -> bool:
    """Whether a column of ``dtype`` in a ``fmt`` file keeps any statistic under ``mode`` (dense
    stores list only those)."""
    return mode != "none" and fmt.stats_kind(dtype) != "none"


def column_stats(
    table: pa.Table,
    columns: Sequence[str],
    types: Sequence[DataType],
    modes: Sequence[str] | None = None,
    fmt: FileFormat = PARQUET,
) -> SimpleStats:
    """Min/max/null counts of ``columns`` of a ``fmt`` file under their statistics ``modes``
    (default ``full``); min/max of a column that has no non-null value is null."""
    if not columns:
        return EMPTY_STATS
    pairs: list[pa.Array] = []  # per column: [min, max]
    nulls: list[int | None] = []
    encoded_types = []
    for i, (name, dtype) in enumerate(zip(columns, types, strict=False)):
        mode = "full" if modes is None else modes[i]
        kind = fmt.stats_kind(dtype)
        if mode == "none" or kind == "none" or dtype.is_nested:
            # No min/max (nor, unless the format counts them, null counts) for nested columns. A
            # null field encodes the same for any type, so a BIGINT stands in for the encoding.
            pairs.append(pa.nulls(2, pa.int64()))
            nulls.append(None if mode == "none" or kind == "none" else table.column(name).null_count)
            encoded_types.append(_NESTED_STANDIN)
            continue
        encoded_types.append(dtype)
        column = table.column(name)
        arrow_type = dtype.to_arrow()
        nulls.append(column.null_count)
        if mode == "counts" or kind == "counts" or column.null_count == len(column):
            pairs.append(pa.nulls(2, arrow_type))
            continue
        pair = fmt.stats_pair(dtype, fmt.min_max(column, arrow_type))
        length = truncation(mode)
        pairs.append(pair if length is None else _truncated_pair(pair, length))
    both = encode_rows(encoded_types, pairs, 2)
    return SimpleStats(both.row(0), both.row(1), tuple(nulls))


@dataclass(frozen=True, slots=True)
class ValueStatsPlan:
    """Which columns of a data file get which statistics, and what ``_VALUE_STATS_COLS`` says."""

    names: tuple[str, ...]  # the columns ``_VALUE_STATS`` covers, in schema order
    types: tuple[DataType, ...]
    modes: tuple[str, ...]
    stats_cols: tuple[str, ...] | None  # ``_VALUE_STATS_COLS``: None = every column of the schema
    fmt: FileFormat = PARQUET  # the format of the files: what their statistics can hold

    def stats(self, table: pa.Table) -> SimpleStats:
        return column_stats(table, self.names, self.types, self.modes, self.fmt) if self.names else EMPTY_STATS


def column_modes(names: Sequence[str], mode: str, field_modes: Mapping[str, str], keep_first_n: int) -> list[str]:
    """Paimon's ``StatsCollectorFactories.createStatsFactories`` for user columns: a column's own
    ``fields.<f>.stats-mode`` first, else ``mode`` for the first ``keep_first_n`` columns (-1: all;
    columns with their own mode count too) and ``none`` after them."""
    out = []
    for count, name in enumerate(names):
        own = field_modes.get(name)
        out.append(own if own is not None else ("none" if 0 <= keep_first_n <= count else mode))
    return out


def value_stats_plan(
    names: Sequence[str],
    types: Sequence[DataType],
    *,
    mode: str,
    field_modes: Mapping[str, str],
    keep_first_n: int,
    dense: bool,
    fmt: FileFormat = PARQUET,
) -> ValueStatsPlan:
    """The plan for a ``fmt`` file of columns ``names`` written under statistics ``mode``."""
    modes = column_modes(names, mode, field_modes, keep_first_n)
    if not dense:
        return ValueStatsPlan(tuple(names), tuple(types), tuple(modes), None, fmt)
    kept = [i for i, (m, t) in enumerate(zip(modes, types, strict=True)) if has_stats(m, t, fmt)]
    plan_names = tuple(names[i] for i in kept)
    return ValueStatsPlan(
        plan_names,
        tuple(types[i] for i in kept),
        tuple(modes[i] for i in kept),
        None if len(kept) == len(names) else plan_names,
        fmt,
    )


@dataclass(frozen=True, slots=True)
class KeyBounds:
    """The first and last key of a key-sorted file (``min_key``/``max_key``) and its key stats."""

    min_key: bytes
    max_key: bytes
    stats: SimpleStats


def sorted_key_bounds(table: pa.Table, columns: Sequence[str], types: Sequence[DataType], fmt: FileFormat = PARQUET) -> KeyBounds:
    """Bounds and statistics of the key columns of a ``fmt`` file sorted by them, with ONE BinaryRow
    encoding of four rows per column (first, last, min, max) instead of one per purpose. The
    leading key column is sorted, so its min/max are its first/last values (no scan)."""
    n = table.num_rows
    key_modes = [KEY_STATS_MODE] * len(columns)
    if not columns or n == 0 or any(table.column(c).null_count for c in columns):
        ends = indices(np.array([0, max(n - 1, 0)]))
        edges = encode_rows(types, [table.column(c).take(ends) for c in columns], 2)
        return KeyBounds(edges.row(0), edges.row(1), column_stats(table, columns, types, key_modes, fmt))
    arrays = []
    for i, (name, dtype) in enumerate(zip(columns, types, strict=True)):
        column = table.column(name)
        edge = column.take(indices(np.array([0, n - 1]))).combine_chunks().cast(dtype.to_arrow())
        # the leading key column is sorted: its min and max are its first and last values
        bounds = fmt.stats_pair(dtype, edge if i == 0 else fmt.min_max(column, dtype.to_arrow()))
        if fmt.stats_kind(dtype) != "full":
            bounds = pa.nulls(2, bounds.type)
        elif dtype.is_string or dtype.is_binary:
            bounds = _truncated_pair(bounds, truncation(KEY_STATS_MODE) or 0)
        arrays.append(pa.concat_arrays([edge, bounds]))
    rows = encode_rows(types, arrays, 4)
    return KeyBounds(rows.row(0), rows.row(1), SimpleStats(rows.row(2), rows.row(3), tuple(0 for _ in columns)))


def values_stats(types: Sequence[DataType], rows: Sequence[Sequence[Any]]) -> SimpleStats:
    """Stats over already decoded rows (partition values of a manifest file)."""
    if not types:
        return EMPTY_STATS
    arrays = [from_pylist([r[i] for r in rows], t.to_arrow()) for i, t in enumerate(types)]
    return column_stats(pa.table(arrays, names=[f"f{i}" for i in range(len(types))]), [f"f{i}" for i in range(len(types))], types)
