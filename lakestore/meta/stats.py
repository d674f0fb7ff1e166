"""Column statistics (min, max, null count) as Paimon's SimpleStats, computed with Arrow kernels."""

from __future__ import annotations

from collections.abc import Sequence
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


def values_stats(types: Sequence[DataType], rows: Sequence[Sequence[Any]]) -> SimpleStats:
    """Stats over already decoded rows (partition values of a manifest file)."""
    if not types:
        return EMPTY_STATS
    arrays = [pa.array([r[i] for r in rows], type=t.to_arrow()) for i, t in enumerate(types)]
    return column_stats(pa.table(arrays, names=[f"f{i}" for i in range(len(types))]), [f"f{i}" for i in range(len(types))], types)
