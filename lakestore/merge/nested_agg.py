"""Aggregate functions of nested columns, as Paimon defines them, vectorised over Arrow lists.

Per key group (rows in sequence order), null inputs are skipped and a group of only nulls stays
null (Paimon's ``agg(accumulator, input)`` returns the other side when one is null):

- ``collect`` (ARRAY): the elements of the group's arrays, concatenated in sequence order; with
  ``fields.<f>.distinct`` each distinct element once, at its first position (nulls count as one
  element; ROW elements compare field by field).
- ``merge_map`` (MAP): the union of the group's maps; a key keeps its first position and takes
  its newest value.
- ``nested_update`` (ARRAY<ROW>): the rows of the group's arrays; with ``fields.<f>.nested-key``
  a row replaces the earlier row of equal key (first position, newest row); null rows are
  dropped then, as they have no key. Without keys it is ``collect``.

Paimon orders merged maps, distinct collections and keyed rows by hash; lakestore's order (first
appearance) is one of the orders Paimon may produce and is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import OptionError
from lakestore.format.arrow_ops import as_numpy, from_numpy
from lakestore.format.types import DataType

NESTED_FUNCTIONS = ("collect", "merge_map", "nested_update")


def check_nested_function(name: str, function: str, dtype: DataType, *, distinct: bool, nested_key: Sequence[str]) -> None:
    """Refuse, by column name, a nested aggregate function the column's type cannot take."""
    if function == "collect":
        if dtype.root != "ARRAY":
            raise OptionError(f"aggregate function 'collect' of column {name!r} needs an ARRAY column, not {dtype}")
        assert dtype.element is not None
        if distinct and not _hashable(dtype.element):
            raise OptionError(f"'fields.{name}.distinct' needs elements of primitive or ROW-of-primitive type, not {dtype.element}")
    elif function == "merge_map":
        if dtype.root != "MAP":
            raise OptionError(f"aggregate function 'merge_map' of column {name!r} needs a MAP column, not {dtype}")
        assert dtype.key is not None
        if dtype.key.is_nested:
            raise OptionError(f"aggregate function 'merge_map' of column {name!r} needs a primitive map key, not {dtype.key}")
    elif function == "nested_update":
        element = dtype.element
        if dtype.root != "ARRAY" or element is None or element.root != "ROW":
            raise OptionError(f"aggregate function 'nested_update' of column {name!r} needs an ARRAY<ROW> column, not {dtype}")
        by_name = {f.name: f.type for f in element.fields}
        for key in nested_key:
            if key not in by_name:
                raise OptionError(f"'fields.{name}.nested-key' {key!r} is not a field of {element}")
            if by_name[key].is_nested:
                raise OptionError(f"'fields.{name}.nested-key' {key!r} must have a primitive type, not {by_name[key]}")
    if nested_key and function != "nested_update":
        raise OptionError(f"'fields.{name}.nested-key' needs the aggregate function 'nested_update', not {function!r}")


def _hashable(dtype: DataType) -> bool:
    if dtype.root == "ROW":
        return all(_hashable(f.type) for f in dtype.fields)
    return not dtype.is_nested


def aggregate_nested(
    function: str, column: pa.ChunkedArray | pa.Array, starts: np.ndarray, ids: np.ndarray, *, distinct: bool, nested_key: Sequence[str]
) -> pa.Array:
    """One value per key group (groups are the contiguous row ranges beginning at ``starts``;
    ``ids`` is every row's group)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    valid = as_numpy(pc.is_valid(array)) if array.null_count else np.ones(len(array), dtype=bool)
    group_valid = np.logical_or.reduceat(valid, starts) if len(starts) else np.zeros(0, dtype=bool)
    if function == "merge_map":
        lists = pa.ListArray.from_arrays(array.offsets, array.values, mask=array.is_null())
        entries = pc.list_flatten(lists)
        group = ids[as_numpy(pc.list_parent_indices(lists))]
        keep, last = _dedupe(group, [pc.struct_field(entries, 0)], newest=True)
        offsets = _offsets(group[keep], len(starts))
        return pa.MapArray.from_arrays(
            offsets, pc.struct_field(entries, 0).take(keep), pc.struct_field(entries, 1).take(last), mask=from_numpy(~group_valid)
        )
    values = pc.list_flatten(array)
    group = ids[as_numpy(pc.list_parent_indices(array))]
    if function == "nested_update" and nested_key:
        present = as_numpy(pc.is_valid(values)) if values.null_count else np.ones(len(values), dtype=bool)
        if not present.all():
            values, group = values.filter(from_numpy(present)), group[present]
        names = [values.type.field(i).name for i in range(values.type.num_fields)]
        keys = [pc.struct_field(values, names.index(k)) for k in nested_key]
        keep, last = _dedupe(group, keys, newest=True)
        values, group = values.take(last), group[keep]
    elif function == "collect" and distinct:
        keep, _ = _dedupe(group, _element_keys(values), newest=False)
        values, group = values.take(keep), group[keep]
    return pa.ListArray.from_arrays(_offsets(group, len(starts)), values, type=array.type, mask=from_numpy(~group_valid))


def _offsets(group: np.ndarray, groups: int) -> pa.Array:
    counts = np.bincount(group, minlength=groups) if len(group) else np.zeros(groups, dtype=np.int64)
    return from_numpy(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))


def _element_keys(values: pa.Array) -> list[pa.Array]:
    """Columns whose equality is element equality: the value itself, or a ROW's validity and
    (recursively) its fields, since Arrow cannot group by a struct."""
    if not pa.types.is_struct(values.type):
        return [values]
    keys: list[pa.Array] = [pc.is_valid(values)]
    for i in range(values.type.num_fields):
        keys += _element_keys(pc.struct_field(values, i))
    return keys


def _dedupe(group: np.ndarray, keys: Sequence[pa.Array], *, newest: bool) -> tuple[np.ndarray, np.ndarray]:
    """For each distinct (group, keys): the position of its first occurrence, and of its newest
    one (when ``newest``), both ordered by first occurrence (so by group, too)."""
    positions = np.arange(len(group), dtype=np.int64)
    names = [f"k{i}" for i in range(len(keys))]
    table = pa.table([from_numpy(group), *keys, from_numpy(positions)], names=["g", *names, "pos"])
    aggregates = [("pos", "min"), ("pos", "max")] if newest else [("pos", "min")]
    result = table.group_by(["g", *names], use_threads=False).aggregate(aggregates)
    first = as_numpy(result.column("pos_min")).astype(np.int64)
    order = np.argsort(first, kind="stable")
    last = as_numpy(result.column("pos_max")).astype(np.int64)[order] if newest else first[order]
    return first[order], last
