"""Changelog from two states of the same keys: +I for new keys, -U/+U for changed ones, -D for
removed ones (vectorised with a hash join). Used by the lookup and full-compaction producers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.format.arrow_ops import sort_indices
from lakestore.format.kv import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, VALUE_KIND

_ORDER = "__changelog_order"


def _rows_equal(left: pa.Table, right: pa.Table, columns: Sequence[str]) -> np.ndarray:
    equal = np.ones(left.num_rows, dtype=bool)
    for name in columns:
        equal &= _values_equal(left.column(name).combine_chunks(), right.column(name).combine_chunks())
    return equal


def _values_equal(a: pa.Array, b: pa.Array) -> np.ndarray:
    """Element-wise equality of two arrays of one type, null equal to null; nested values
    (lists, maps in entry order, structs) compare recursively, vectorised over their children."""
    null_a, null_b = np.asarray(pc.is_null(a), dtype=bool), np.asarray(pc.is_null(b), dtype=bool)
    if pa.types.is_struct(a.type):
        same = np.ones(len(a), dtype=bool)
        for i in range(a.type.num_fields):
            same &= _values_equal(pc.struct_field(a, i), pc.struct_field(b, i))
    elif pa.types.is_list(a.type) or pa.types.is_large_list(a.type) or pa.types.is_map(a.type):
        if pa.types.is_map(a.type):  # as lists of key/value entries
            a, b = (pa.ListArray.from_arrays(pa.array(np.asarray(x.offsets)), x.values, mask=x.is_null()) for x in (a, b))
        len_a = np.asarray(pc.list_value_length(a).fill_null(0), dtype=np.int64)
        len_b = np.asarray(pc.list_value_length(b).fill_null(0), dtype=np.int64)
        same = len_a == len_b
        rows = pa.array(np.flatnonzero(same & ~null_a & ~null_b))
        lengths = len_a[np.asarray(rows, dtype=np.int64)]
        children = _values_equal(pc.list_flatten(a.take(rows)), pc.list_flatten(b.take(rows)))
        # A row's elements are all equal iff its segment of ``children`` has no mismatch.
        mismatches = np.concatenate([[0], np.cumsum(~children)])
        ends = np.cumsum(lengths)
        same[np.asarray(rows, dtype=np.int64)] = mismatches[ends] == mismatches[ends - lengths]
    else:
        same = np.asarray(pc.fill_null(pc.equal(a, b), False), dtype=bool)
    return np.where(null_a | null_b, null_a & null_b, same)


def _with_kind(rows: pa.Table, kind: int, order: int) -> pa.Table:
    n = rows.num_rows
    rows = rows.set_column(rows.schema.get_field_index(VALUE_KIND), VALUE_KIND, pa.array(np.full(n, kind, dtype=np.int8)))
    return rows.append_column(_ORDER, pa.array(np.full(n, order, dtype=np.int8)))


def diff_changelog(
    before: pa.Table, after: pa.Table, key_columns: Sequence[str], value_columns: Sequence[str], *, row_deduplicate: bool
) -> pa.Table:
    """``before``/``after``: one row per key, no retractions, same schema (kv layout)."""
    keys = list(key_columns)
    left = before.select(keys).append_column("__before", pa.array(np.arange(before.num_rows, dtype=np.int64)))
    right = after.select(keys).append_column("__after", pa.array(np.arange(after.num_rows, dtype=np.int64)))
    joined = left.join(right, keys=keys, join_type="full outer", use_threads=False)
    b_index = joined.column("__before")
    a_index = joined.column("__after")
    has_b = np.asarray(pc.is_valid(b_index), dtype=bool)
    has_a = np.asarray(pc.is_valid(a_index), dtype=bool)
    b_values = np.asarray(b_index.fill_null(0), dtype=np.int64)
    a_values = np.asarray(a_index.fill_null(0), dtype=np.int64)
    both = has_b & has_a
    old = before.take(pa.array(b_values[both]))
    new = after.take(pa.array(a_values[both]))
    if row_deduplicate and old.num_rows:
        changed = ~_rows_equal(old, new, value_columns)
        old, new = old.filter(pa.array(changed)), new.filter(pa.array(changed))
    parts = [
        _with_kind(before.take(pa.array(b_values[has_b & ~has_a])), DELETE, 0),
        _with_kind(old, UPDATE_BEFORE, 0),
        _with_kind(new, UPDATE_AFTER, 1),
        _with_kind(after.take(pa.array(a_values[has_a & ~has_b])), INSERT, 1),
    ]
    out = pa.concat_tables(parts, promote_options="permissive")
    if out.num_rows > 1:
        out = out.take(sort_indices(out, keys + [_ORDER]))
    return out.drop_columns([_ORDER])
