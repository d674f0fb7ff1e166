"""Changelog from two states of the same keys: +I for new keys, -U/+U for changed ones, -D for
removed ones (vectorised with a hash join). Used by the lookup and full-compaction producers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.format.arrow_ops import as_numpy, from_numpy, indices, is_member, key_codes, positions_in, sort_indices
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
    null_a, null_b = as_numpy(pc.is_null(a)), as_numpy(pc.is_null(b))
    if pa.types.is_struct(a.type):
        same = np.ones(len(a), dtype=bool)
        for i in range(a.type.num_fields):
            same &= _values_equal(pc.struct_field(a, i), pc.struct_field(b, i))
    elif pa.types.is_list(a.type) or pa.types.is_large_list(a.type) or pa.types.is_map(a.type):
        if pa.types.is_map(a.type):  # as lists of key/value entries
            a, b = (pa.ListArray.from_arrays(x.offsets, x.values, mask=x.is_null()) for x in (a, b))
        len_a = as_numpy(pc.list_value_length(a)).astype(np.int64) * ~null_a
        len_b = as_numpy(pc.list_value_length(b)).astype(np.int64) * ~null_b
        same = len_a == len_b
        positions = np.flatnonzero(same & ~null_a & ~null_b)
        rows = indices(positions)
        lengths = len_a[positions]
        children = _values_equal(pc.list_flatten(a.take(rows)), pc.list_flatten(b.take(rows)))
        # A row's elements are all equal iff its segment of ``children`` has no mismatch.
        mismatches = np.concatenate([[0], np.cumsum(~children)])
        ends = np.cumsum(lengths)
        same[positions] = mismatches[ends] == mismatches[ends - lengths]
    else:
        equal = pc.equal(a, b)
        same = as_numpy(equal) & (as_numpy(pc.is_valid(equal)) if equal.null_count else True)
    return np.where(null_a | null_b, null_a & null_b, same)


def _with_kind(rows: pa.Table, kind: int, order: int) -> pa.Table:
    n = rows.num_rows
    rows = rows.set_column(rows.schema.get_field_index(VALUE_KIND), VALUE_KIND, from_numpy(np.full(n, kind, dtype=np.int8)))
    return rows.append_column(_ORDER, from_numpy(np.full(n, order, dtype=np.int8)))


def diff_changelog(
    before: pa.Table,
    after: pa.Table,
    key_columns: Sequence[str],
    value_columns: Sequence[str],
    *,
    row_deduplicate: bool,
    touched: np.ndarray | None = None,
) -> pa.Table:
    """``before``/``after``: one row per key, no retractions, same schema (kv layout). A key on
    both sides gives -U/+U, also when its values are equal (as Paimon, unless
    ``changelog-producer.row-deduplicate``), except a key ``touched`` marks False (per
    ``before`` row; None: all touched): only its old record went into the merge, which changed
    nothing (Paimon's full-compaction producer emits nothing for a key no new record reached)."""
    keys = list(key_columns)
    # match the keys (unique on each side) by their codes: before rows with/without an after row
    b_codes, a_codes = key_codes([before, after], keys)
    at, matched = positions_in(b_codes, a_codes)
    old = before.filter(from_numpy(matched))
    new = after.take(indices(at[matched]))
    only_before = before.filter(from_numpy(~matched))
    only_after = after.filter(from_numpy(~is_member(a_codes, b_codes)))
    if old.num_rows and (row_deduplicate or touched is not None):
        changed = ~_rows_equal(old, new, value_columns)
        if not row_deduplicate:
            assert touched is not None
            changed |= touched[matched]
        old, new = old.filter(from_numpy(changed)), new.filter(from_numpy(changed))
    parts = [
        _with_kind(only_before, DELETE, 0),
        _with_kind(old, UPDATE_BEFORE, 0),
        _with_kind(new, UPDATE_AFTER, 1),
        _with_kind(only_after, INSERT, 1),
    ]
    out = pa.concat_tables(parts, promote_options="permissive")
    if out.num_rows > 1:
        out = out.take(sort_indices(out, keys + [_ORDER]))
    return out.drop_columns([_ORDER])
