"""Column statistics (min, max, null count) as Paimon's SimpleStats, computed with Arrow kernels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import from_pylist, indices, min_max
from lakestore.format.binary_row import encode_rows, encode_values
from lakestore.format.types import DataType
from lakestore.meta.manifest import SimpleStats

_NESTED_STANDIN = DataType("BIGINT")
EMPTY_STATS = SimpleStats(encode_values([], []), encode_values([], []), ())


def column_stats(table: pa.Table, columns: Sequence[str], types: Sequence[DataType]) -> SimpleStats:
    """Min/max/null counts of ``columns``; min/max of a column that has no non-null value is null."""
    if not columns:
        return EMPTY_STATS
    pairs: list[pa.Array] = []  # per column: [min, max]
    nulls: list[int | None] = []
    encoded_types = []
    for name, dtype in zip(columns, types, strict=False):
        if dtype.is_nested:
            # Paimon keeps no statistics for nested columns: null min, max and null count. A null
            # field encodes the same for any type, so a BIGINT stands in for the encoding.
            pairs.append(pa.nulls(2, pa.int64()))
            nulls.append(None)
            encoded_types.append(_NESTED_STANDIN)
            continue
        encoded_types.append(dtype)
        column = table.column(name)
        arrow_type = dtype.to_arrow()
        nulls.append(column.null_count)
        pairs.append(pa.nulls(2, arrow_type) if column.null_count == len(column) else min_max(column, arrow_type))
    both = encode_rows(encoded_types, pairs, 2)
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
        ends = indices(np.array([0, max(n - 1, 0)]))
        edges = encode_rows(types, [table.column(c).take(ends) for c in columns], 2)
        return KeyBounds(edges.row(0), edges.row(1), column_stats(table, columns, types))
    arrays = []
    for i, (name, dtype) in enumerate(zip(columns, types, strict=True)):
        column = table.column(name)
        edge = column.take(indices(np.array([0, n - 1]))).combine_chunks().cast(dtype.to_arrow())
        # the leading key column is sorted: its min and max are its first and last values
        arrays.append(pa.concat_arrays([edge, edge if i == 0 else min_max(column, dtype.to_arrow())]))
    rows = encode_rows(types, arrays, 4)
    return KeyBounds(rows.row(0), rows.row(1), SimpleStats(rows.row(2), rows.row(3), tuple(0 for _ in columns)))


def values_stats(types: Sequence[DataType], rows: Sequence[Sequence[Any]]) -> SimpleStats:
    """Stats over already decoded rows (partition values of a manifest file)."""
    if not types:
        return EMPTY_STATS
    arrays = [from_pylist([r[i] for r in rows], t.to_arrow()) for i, t in enumerate(types)]
    return column_stats(pa.table(arrays, names=[f"f{i}" for i in range(len(types))]), [f"f{i}" for i in range(len(types))], types)
