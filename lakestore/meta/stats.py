"""Column statistics (min, max, null count) as Paimon's SimpleStats, computed with Arrow kernels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lakestore.format.binary_row import encode_rows, encode_values
from lakestore.format.types import DataType
from lakestore.meta.manifest import SimpleStats

_NESTED_STANDIN = DataType("BIGINT")
EMPTY_STATS = SimpleStats(encode_values([], []), encode_values([], []), ())


def column_stats(table: pa.Table, columns: Sequence[str], types: Sequence[DataType]) -> SimpleStats:
    """Min/max/null counts of ``columns``; min/max of a column that has no non-null value is null."""
    if not columns:
        return EMPTY_STATS
    mins: list[pa.Array] = []
    maxs: list[pa.Array] = []
    nulls: list[int | None] = []
    encoded_types = []
    for name, dtype in zip(columns, types, strict=False):
        if dtype.is_nested:
            # Paimon keeps no statistics for nested columns: null min, max and null count. A null
            # field encodes the same for any type, so a BIGINT stands in for the encoding.
            mins.append(pa.nulls(1, pa.int64()))
            maxs.append(pa.nulls(1, pa.int64()))
            nulls.append(None)
            encoded_types.append(_NESTED_STANDIN)
            continue
        encoded_types.append(dtype)
        column = table.column(name)
        arrow_type = dtype.to_arrow()
        nulls.append(column.null_count)
        if column.null_count == len(column):
            mins.append(pa.nulls(1, arrow_type))
            maxs.append(pa.nulls(1, arrow_type))
            continue
        result = pc.min_max(column)
        mins.append(pa.array([result["min"]], type=arrow_type))
        maxs.append(pa.array([result["max"]], type=arrow_type))
    both = encode_rows(encoded_types, [pa.concat_arrays([lo, hi]) for lo, hi in zip(mins, maxs, strict=False)], 2)
    return SimpleStats(both.row(0), both.row(1), tuple(nulls))


@dataclass(frozen=True, slots=True)
class KeyBounds:
    """The first and last key of a key-sorted file (``min_key``/``max_key``) and its key stats."""

    min_key: bytes
    max_key: bytes
    stats: SimpleStats


def sorted_key_bounds(table: pa.Table, columns: Sequence[str], types: Sequence[DataType]) -> KeyBounds:
    """Bounds and statistics of the key columns of a table sorted by them, with ONE BinaryRow
    encoding of four rows per column (first, last, min, max) instead of one per purpose. The
    leading key column is sorted, so its min/max are its first/last values (no scan)."""
    n = table.num_rows
    if not columns or n == 0 or any(table.column(c).null_count for c in columns):
        edges = encode_rows(types, [table.column(c).take([0, max(n - 1, 0)]) for c in columns], 2)
        return KeyBounds(edges.row(0), edges.row(1), column_stats(table, columns, types))
    arrays = []
    for i, (name, dtype) in enumerate(zip(columns, types, strict=True)):
        column = table.column(name)
        edge = column.take([0, n - 1]).combine_chunks().cast(dtype.to_arrow())
        if i == 0:
            arrays.append(pa.concat_arrays([edge, edge]))
            continue
        result = pc.min_max(column)
        arrays.append(pa.concat_arrays([edge, pa.array([result["min"], result["max"]], type=dtype.to_arrow())]))
    rows = encode_rows(types, arrays, 4)
    return KeyBounds(rows.row(0), rows.row(1), SimpleStats(rows.row(2), rows.row(3), tuple(0 for _ in columns)))


def values_stats(types: Sequence[DataType], rows: Sequence[Sequence[Any]]) -> SimpleStats:
    """Stats over already decoded rows (partition values of a manifest file)."""
    if not types:
        return EMPTY_STATS
    arrays = [pa.array([r[i] for r in rows], type=t.to_arrow()) for i, t in enumerate(types)]
    return column_stats(pa.table(arrays, names=[f"f{i}" for i in range(len(types))]), [f"f{i}" for i in range(len(types))], types)
