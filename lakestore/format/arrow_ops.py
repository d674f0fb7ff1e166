"""Vectorised helpers over Arrow tables: group boundaries of sorted data, sorting, key matching,
and the NumPy/Python -> Arrow conversions of the read and write paths, done on the buffers.
pyarrow's own conversions (``pa.array``, ``pa.scalar``, ``to_numpy``, ``np.asarray(array)``,
``Schema.empty_table``) and Acero (``Table.join``, ``group_by``) import pandas on first use when
it is installed: ~0.3 s of a process's first read or write."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Collection, Sequence
from typing import Any

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
    """The values of a fixed-width or boolean column (dates and timestamps as their integers),
    read from its buffers; values at null positions are undefined."""
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


def from_numpy(values: np.ndarray, *, null: np.ndarray | None = None) -> pa.Array:
    """A 1-D NumPy boolean, integer or floating-point array as an Arrow array on its buffer
    (``pa.array`` without pandas); ``null`` marks null positions."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        arrow_type, data = pa.bool_(), pa.py_buffer(np.packbits(values, bitorder="little"))
    else:
        arrow_type, data = pa.from_numpy_dtype(values.dtype), pa.py_buffer(values)
    if null is None or not null.any():
        return pa.Array.from_buffers(arrow_type, len(values), [None, data], null_count=0)
    validity = pa.py_buffer(np.packbits(~np.asarray(null, dtype=bool), bitorder="little"))
    return pa.Array.from_buffers(arrow_type, len(values), [validity, data], null_count=int(np.count_nonzero(null)))


def min_max(column: pa.ChunkedArray | pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """[min, max] of a column holding a non-null value, as a two-element array of ``arrow_type``."""
    result = pc.min_max(column)
    return pa.concat_arrays([pa.repeat(result["min"], 1), pa.repeat(result["max"], 1)]).cast(arrow_type)


_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_EXACT = decimal.Context(prec=100)  # scaling a DECIMAL(38, s) must not round
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _epoch_micros(value: dt.datetime) -> int:
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _fixed_width_values(values: Sequence[Any], arrow_type: pa.DataType) -> np.ndarray | None:
    """The stored integers/floats of ``values`` (None -> 0) for ``arrow_type``, or None when a
    value is not of the Python type this conversion knows for it."""
    present = [v for v in values if v is not None]
    if pa.types.is_boolean(arrow_type) and all(isinstance(v, bool) for v in present):
        return np.array([bool(v) for v in values], dtype=bool)
    dtype = _fixed_width_dtype(arrow_type)
    if dtype is None:
        return None
    if pa.types.is_date32(arrow_type) and all(isinstance(v, dt.date) and not isinstance(v, dt.datetime) for v in present):
        stored: list[Any] = [0 if v is None else (v - _EPOCH_DATE).days for v in values]
    elif pa.types.is_timestamp(arrow_type) and all(isinstance(v, dt.datetime) for v in present):
        per_second = _PER_SECOND[arrow_type.unit]
        micros = [0 if v is None else _epoch_micros(v) for v in values]
        if per_second < 1_000_000 and any(m % (1_000_000 // per_second) for m in micros):
            return None  # not exact in the unit: let pyarrow decide
        stored = [m * per_second // 1_000_000 if per_second < 1_000_000 else m * (per_second // 1_000_000) for m in micros]
    elif (pa.types.is_integer(arrow_type) or pa.types.is_time32(arrow_type)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in present
    ):
        stored = [0 if v is None else v for v in values]
    elif pa.types.is_floating(arrow_type) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        stored = [0.0 if v is None else v for v in values]
    else:
        return None
    try:
        return np.array(stored, dtype=dtype)
    except OverflowError:
        return None


def from_pylist(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    """Python values (None for null) as an Arrow array of ``arrow_type``, built on buffers for
    the scalar types metadata holds (numbers, booleans, strings, binaries, dates, timestamps, times
    as milliseconds, decimals); other types and unexpected values go through ``pa.array``."""
    n = len(values)
    null = np.array([v is None for v in values], dtype=bool)
    validity = None if not null.any() else pa.py_buffer(np.packbits(~null, bitorder="little"))
    nulls = int(null.sum())
    fixed = _fixed_width_values(values, arrow_type)
    if fixed is not None:
        data = pa.py_buffer(np.packbits(fixed, bitorder="little")) if fixed.dtype == bool else pa.py_buffer(fixed)
        return pa.Array.from_buffers(arrow_type, n, [validity, data], null_count=nulls)
    present = [v for v in values if v is not None]
    string, binary = pa.types.is_string(arrow_type), pa.types.is_binary(arrow_type)
    if (string and all(isinstance(v, str) for v in present)) or (binary and all(isinstance(v, bytes) for v in present)):
        encoded = [b"" if v is None else (v.encode() if isinstance(v, str) else v) for v in values]
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        return pa.Array.from_buffers(arrow_type, n, [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))], null_count=nulls)
    if pa.types.is_decimal128(arrow_type) and all(isinstance(v, decimal.Decimal) for v in present):
        unscaled = [decimal.Decimal(0) if v is None else v.scaleb(arrow_type.scale, _EXACT) for v in values]
        if all(u == u.to_integral_value() for u in unscaled):
            raw = b"".join(int(u).to_bytes(16, "little", signed=True) for u in unscaled)
            return pa.Array.from_buffers(arrow_type, n, [validity, pa.py_buffer(raw)], null_count=nulls)
    return pa.array(values, type=arrow_type)


def indices(values: np.ndarray) -> pa.Array:
    """Row indices for ``take`` as an Arrow int64 array (no copy)."""
    return from_numpy(np.asarray(values, dtype=np.int64))


def mask(values: np.ndarray) -> pa.Array:
    """A NumPy boolean mask as an Arrow boolean array (for ``filter`` and ``if_else``)."""
    return from_numpy(np.asarray(values, dtype=bool))


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


def sort_indices(table: pa.Table, keys: Sequence[str], *, descending: Collection[str] = ()) -> pa.Array:
    """Stable ascending sort order by ``keys`` (nulls first). NumPy when every key is a null-free
    fixed-width column (several times faster than Arrow's multi-key sort); for one key its stable
    sort, a timsort/radix sort that merges already sorted runs (e.g. concatenated sorted files)
    in close to linear time. Keys in ``descending`` sort descending, nulls still first (as
    Paimon's generated comparators order a descending ``sequence.field``)."""
    return indices(sort_order(table, keys, descending=descending))


def sort_order(table: pa.Table, keys: Sequence[str], *, descending: Collection[str] = ()) -> np.ndarray:
    """``sort_indices`` as a NumPy int64 array."""
    columns = [table.column(k) for k in keys]
    if not descending and all(c.null_count == 0 and any(check(c.type) for check in NUMPY_SORTABLE) for c in columns):
        arrays = [as_numpy(c) for c in reversed(columns)]
        if len(arrays) == 1:
            return np.argsort(arrays[0], kind="stable")
        return np.lexsort(arrays)
    directions = ["descending" if k in descending else "ascending" for k in keys]
    if _PER_KEY_NULLS:
        order = pc.sort_indices(table, sort_keys=[(k, d, "at_start") for k, d in zip(keys, directions, strict=True)])
    else:
        order = pc.sort_indices(table, sort_keys=list(zip(keys, directions, strict=True)), null_placement="at_start")
    return as_numpy(order).astype(np.int64)


def group_order(codes: np.ndarray) -> np.ndarray:
    """Stable ascending order of non-negative integer group codes. Codes below 2**16 sort as
    uint16, which NumPy sorts with a radix sort (~5x faster than its int64 stable sort)."""
    if len(codes) and int(codes.max()) < 1 << 16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    return np.argsort(codes, kind="stable")


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` through a sort: NumPy 2.3+'s hash-based ``unique`` is several times
    slower on integer arrays of this size."""
    ordered = np.sort(values)
    keep = np.ones(len(ordered), dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


def key_codes(tables: Sequence[pa.Table], columns: Sequence[str]) -> list[np.ndarray]:
    """An int64 code per row of each table for its values of ``columns``: rows of any of the
    tables get equal codes exactly when their values are equal (null equal to null). One
    dictionary encoding per column over all the tables' values; the codes of several columns
    are combined and renumbered densely, so they stay below the row count."""
    sizes = [t.num_rows for t in tables]
    codes = np.zeros(sum(sizes), dtype=np.int64)
    for i, name in enumerate(columns):
        chunks = [chunk for t in tables for chunk in t.column(name).chunks]
        column = pa.chunked_array(chunks, type=tables[0].schema.field(name).type).combine_chunks()
        encoded = pc.dictionary_encode(column, null_encoding="encode")
        values = as_numpy(encoded.indices).astype(np.int64)
        if i == 0:
            codes = values
        else:  # both factors are below the row count: the product fits in int64
            combined = codes * len(encoded.dictionary) + values
            codes = np.searchsorted(sorted_unique(combined), combined)
    return np.split(codes, np.cumsum(sizes)[:-1])


def positions_in(values: np.ndarray, of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each value, the index of an equal element of ``of`` (0 when there is none) and
    whether there is one; through a sort of ``of`` (no hash table)."""
    if not len(of):
        return np.zeros(len(values), dtype=np.int64), np.zeros(len(values), dtype=bool)
    order = np.argsort(of, kind="stable")
    at = order[np.minimum(np.searchsorted(of[order], values), len(of) - 1)]
    return at, of[at] == values


def is_member(values: np.ndarray, of: np.ndarray) -> np.ndarray:
    """``np.isin(values, of)``."""
    return positions_in(values, of)[1]


def rows_with_keys_in(rows: pa.Table, keys: pa.Table, columns: Sequence[str]) -> np.ndarray:
    """Mask of the rows of ``rows`` whose ``columns`` values occur in ``keys`` (a semi join)."""
    row_codes, key_codes_ = key_codes([rows, keys], columns)
    return is_member(row_codes, key_codes_)
