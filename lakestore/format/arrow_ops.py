"""Vectorised helpers over Arrow tables: group boundaries of sorted data, sorting, and the
NumPy <-> Arrow conversions of the read path done on the buffers (pyarrow's own conversions,
``to_numpy`` / ``pa.array(ndarray)``, import pandas on first use: ~0.3 s of a process's first read)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _fixed_width_dtype(arrow_type: pa.DataType) -> np.dtype | None:
    if pa.types.is_integer(arrow_type):
        return np.dtype(f"{'i' if pa.types.is_signed_integer(arrow_type) else 'u'}{arrow_type.bit_width // 8}")
    if pa.types.is_floating(arrow_type) and arrow_type.bit_width in (32, 64):
        return np.dtype(f"f{arrow_type.bit_width // 8}")
    if pa.types.is_date(arrow_type) or pa.types.is_timestamp(arrow_type) or pa.types.is_time(arrow_type):
        return np.dtype(f"i{arrow_type.bit_width // 8}")  # the stored integers: same order
    return None


def as_numpy(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """The values of a null-free fixed-width or boolean column (dates and timestamps as their
    integers), read from its buffers."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    dtype = _fixed_width_dtype(column.type)
    parts = []
    for chunk in chunks:
        data = chunk.buffers()[1]
        if not len(chunk):
            continue
        if dtype is not None:
            parts.append(np.frombuffer(data, dtype=dtype, count=len(chunk), offset=chunk.offset * dtype.itemsize))
        elif pa.types.is_boolean(column.type):
            bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
            parts.append(bits[chunk.offset : chunk.offset + len(chunk)].astype(bool))
        else:
            parts.append(np.asarray(chunk.to_numpy(zero_copy_only=False)))
    if not parts:
        if dtype is None:
            dtype = np.dtype(bool) if pa.types.is_boolean(column.type) else np.dtype(object)
        return np.zeros(0, dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def indices(values: np.ndarray) -> pa.Array:
    """Row indices for ``take`` as an Arrow int64 array (no copy)."""
    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def mask(values: np.ndarray) -> pa.Array:
    """A NumPy boolean mask as an Arrow boolean array (for ``filter``)."""
    bits = np.packbits(np.asarray(values, dtype=bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])


def _adjacent_equal(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """eq[i] = column[i+1] == column[i], treating null == null."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    a, b = column.slice(1), column.slice(0, len(column) - 1)
    eq = pc.equal(a, b)
    out = as_numpy(eq)
    if eq.null_count:
        out &= as_numpy(pc.is_valid(eq))
        if column.null_count:
            out |= as_numpy(pc.and_(pc.is_null(a), pc.is_null(b)))
    return out


def group_starts(table: pa.Table, columns: Sequence[str]) -> np.ndarray:
    """Start index of every run of equal values of ``columns`` in a table sorted by them."""
    n = table.num_rows
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if not columns:
        return np.zeros(1, dtype=np.int64)
    same = np.ones(n - 1, dtype=bool)
    for name in columns:
        same &= _adjacent_equal(table.column(name))
    return np.concatenate([[0], np.flatnonzero(~same) + 1]).astype(np.int64)


def group_last(starts: np.ndarray, n: int) -> np.ndarray:
    """Index of the last row of every group."""
    return np.concatenate([starts[1:], [n]]).astype(np.int64) - 1


def _per_key_null_placement() -> bool:
    """Whether sort keys carry their own null placement (newer pyarrow deprecates the options-wide one)."""
    try:
        pc.SortOptions(sort_keys=[("k", "ascending", "at_start")])
    except (TypeError, ValueError):
        return False
    return True


_PER_KEY_NULLS = _per_key_null_placement()

NUMPY_SORTABLE = (pa.types.is_integer, pa.types.is_floating, pa.types.is_date, pa.types.is_timestamp, pa.types.is_boolean)


def sort_indices(table: pa.Table, keys: Sequence[str]) -> pa.Array:
    """Stable ascending sort order by ``keys`` (nulls first). NumPy when every key is a null-free
    fixed-width column (several times faster than Arrow's multi-key sort); for one key its stable
    sort, a timsort/radix sort that merges already sorted runs (e.g. concatenated sorted files)
    in close to linear time."""
    return indices(sort_order(table, keys))


def sort_order(table: pa.Table, keys: Sequence[str]) -> np.ndarray:
    """``sort_indices`` as a NumPy int64 array."""
    columns = [table.column(k) for k in keys]
    if all(c.null_count == 0 and any(check(c.type) for check in NUMPY_SORTABLE) for c in columns):
        arrays = [as_numpy(c) for c in reversed(columns)]
        if len(arrays) == 1:
            return np.argsort(arrays[0], kind="stable")
        return np.lexsort(arrays)
    if _PER_KEY_NULLS:
        order = pc.sort_indices(table, sort_keys=[(k, "ascending", "at_start") for k in keys])
    else:
        order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in keys], null_placement="at_start")
    return as_numpy(order).astype(np.int64)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` through a sort: NumPy 2.3+'s hash-based ``unique`` is several times
    slower on integer arrays of this size."""
    ordered = np.sort(values)
    keep = np.ones(len(ordered), dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]
