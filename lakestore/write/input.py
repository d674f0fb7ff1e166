"""Input checking and routing: conform user data to the table schema, derive row kinds, and
compute each row's partition and bucket (vectorised)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import NullKeyError, SchemaMismatchError
from lakestore.format.arrow_ops import as_numpy, from_numpy, group_order, indices, sort_order
from lakestore.format.binary_row import encode_values
from lakestore.format.bucket import compute_buckets
from lakestore.format.kv import DELETE, ROW_KIND_SHORT, UPDATE_BEFORE
from lakestore.format.partition_path import partition_path
from lakestore.format.types import DataType, from_arrow
from lakestore.meta.schema import TableSchema

_FAMILIES = {
    "TINYINT": "int",
    "SMALLINT": "int",
    "INT": "int",
    "BIGINT": "int",
    "FLOAT": "float",
    "DOUBLE": "float",
    "CHAR": "str",
    "VARCHAR": "str",
    "BINARY": "bin",
    "VARBINARY": "bin",
    "DECIMAL": "dec",
    "DATE": "date",
    "TIME": "time",
    "BOOLEAN": "bool",
    "TIMESTAMP": "ts",
    "TIMESTAMP_LTZ": "ts_ltz",
}


def _castable(source: pa.DataType, target: DataType) -> bool:
    try:
        source_type = from_arrow(source)
    except Exception:  # noqa: BLE001 - any unmappable type is simply not castable
        return pa.types.is_null(source)
    return _same_family(source_type, target)


def _same_family(source: DataType, target: DataType) -> bool:
    """Nested types: the same structure and ROW field names, with castable leaves."""
    if target.root == "MULTISET" and source.root == "MAP":  # element -> count, as Paimon represents it
        assert source.value is not None
        return _same_family(source.children()[0], target.children()[0]) and source.value.is_integer
    if source.is_nested or target.is_nested:
        if source.root != target.root or [f.name for f in source.fields] != [f.name for f in target.fields]:
            return False
        return all(_same_family(s, t) for s, t in zip(source.children(), target.children(), strict=True))
    return _FAMILIES.get(source.root) == _FAMILIES.get(target.root)


def conform(data: pa.Table, schema: TableSchema) -> pa.Table:
    """Reorder and safely cast ``data`` to the table's Arrow schema, or raise SchemaMismatchError."""
    expected = schema.field_names
    names = data.column_names
    if len(set(names)) != len(names):
        raise SchemaMismatchError(f"duplicate columns in input: {names}")
    missing = [n for n in expected if n not in names]
    extra = [n for n in names if n not in expected]
    if missing or extra:
        raise SchemaMismatchError(f"input columns do not match the table: missing {missing}, unexpected {extra}")
    columns = []
    for f in schema.fields:
        column = data.column(f.name)
        target = f.type.to_arrow()
        if column.type != target:
            if not _castable(column.type, f.type):
                raise SchemaMismatchError(f"column {f.name!r}: cannot write {column.type} into {f.type}")
            try:
                column = column.cast(target, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise SchemaMismatchError(f"column {f.name!r}: values do not fit {f.type}: {exc}") from exc
        if not f.type.nullable and column.null_count:
            kind = "primary-key column" if f.name in schema.primary_keys else "NOT NULL column"
            raise NullKeyError(f"{kind} {f.name!r} holds {column.null_count} null value(s)")
        if f.type.is_nested:
            where = _null_in_not_null_part(
                column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column, f.type, f"column {f.name!r}"
            )
            if where is not None:
                raise NullKeyError(f"{where} is NOT NULL but holds null values")
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema.arrow_schema())


def _null_in_not_null_part(array: pa.Array, dtype: DataType, path: str) -> str | None:
    """The first NOT NULL part of a nested column that holds a null (Arrow does not check the
    nullability of child fields), or None. Values under a null parent do not count."""
    if dtype.root in ("ARRAY", "MULTISET", "MAP"):
        if pa.types.is_map(array.type):
            entries = pa.ListArray.from_arrays(array.offsets, array.values, mask=array.is_null())
            flat = pc.list_flatten(entries)
            # A MULTISET's counts are INT NOT NULL.
            child, child_type, child_path = pc.struct_field(flat, 1), dtype.value or DataType("INT", False), f"{path} value"
        else:
            assert dtype.element is not None
            child, child_type, child_path = pc.list_flatten(array), dtype.element, f"{path} element"
        if not child_type.nullable and child.null_count:
            return child_path
        return _null_in_not_null_part(child, child_type, child_path) if child_type.is_nested else None
    for i, field in enumerate(dtype.fields):
        child = pc.struct_field(array, i)  # null where the ROW itself is null
        child_path = f"{path}.{field.name}"
        if not field.type.nullable and pc.any(pc.and_(pc.is_null(child), pc.is_valid(array))).as_py():
            return child_path
        found = _null_in_not_null_part(child, field.type, child_path) if field.type.is_nested else None
        if found is not None:
            return found
    return None


def row_kinds(data: pa.Table, schema: TableSchema) -> pa.Array:
    """``_VALUE_KIND`` of every row: from ``rowkind.field`` when set, else +I."""
    field = schema.core_options().rowkind_field
    if field is None:
        return from_numpy(np.zeros(data.num_rows, dtype=np.int8))
    column = data.column(field)
    if column.null_count:
        raise SchemaMismatchError(f"rowkind.field {field!r} holds nulls")
    codes = pc.index_in(column, value_set=pa.array(list(ROW_KIND_SHORT), type=column.type))
    if codes.null_count:
        bad = pc.filter(column, pc.is_null(codes))[0].as_py()
        raise SchemaMismatchError(f"rowkind.field {field!r} holds {bad!r}; expected one of {list(ROW_KIND_SHORT)}")
    kinds = np.array(list(ROW_KIND_SHORT.values()), dtype=np.int8)
    return from_numpy(kinds[as_numpy(codes)])


def filter_row_kinds(rows: pa.Table, kinds: pa.Array, schema: TableSchema) -> tuple[pa.Table, pa.Array]:
    """Paimon 2.0's RowKindFilter (TableWriteImpl): with ``ignore-update-before`` the -U rows,
    with ``ignore-delete`` the -U and -D rows are dropped as they are written, before buckets
    are assigned (whatever the merge engine)."""
    options = schema.core_options()
    if not (options.ignore_update_before or options.ignore_delete):
        return rows, kinds
    values = as_numpy(kinds)
    keep = values != UPDATE_BEFORE
    if options.ignore_delete:
        keep &= values != DELETE
    if keep.all():
        return rows, kinds
    return rows.filter(from_numpy(keep)), kinds.filter(from_numpy(keep))


def assign_buckets(data: pa.Table, schema: TableSchema) -> np.ndarray:
    buckets = schema.core_options().bucket
    if buckets == -1:
        return np.zeros(data.num_rows, dtype=np.int32)
    keys = schema.bucket_keys
    function = schema.core_options().get("bucket-function.type")
    return compute_buckets(schema.types_of(keys), [data.column(k).combine_chunks() for k in keys], buckets, function)


@dataclass(frozen=True)
class PartitionSpec:
    """A partition: its values, its BinaryRow, its directory."""

    values: tuple[Any, ...]
    binary: bytes
    path: str


def partition_spec(schema: TableSchema, values: tuple[Any, ...]) -> PartitionSpec:
    types: list[DataType] = schema.types_of(schema.partition_keys)
    default = schema.core_options().partition_default_name
    return PartitionSpec(values, encode_values(types, values), partition_path(schema.partition_keys, types, values, default_name=default))


def partition_values(data: pa.Table, partition_keys: Sequence[str], row: int) -> tuple[Any, ...]:
    return tuple(data.column(k)[row].as_py() for k in partition_keys)


def partition_codes(data: pa.Table, partition_keys: Sequence[str]) -> np.ndarray:
    """A number per row, equal for rows of the same partition (int64, vectorised)."""
    group = np.zeros(data.num_rows, dtype=np.int64)
    radix = 1
    for name in partition_keys:
        encoded = pc.dictionary_encode(data.column(name).combine_chunks(), null_encoding="encode")
        group = group + as_numpy(encoded.indices).astype(np.int64) * radix
        radix *= len(encoded.dictionary)
    return group


def partition_groups(data: pa.Table, partition_keys: Sequence[str]) -> Iterator[tuple[tuple[Any, ...], np.ndarray]]:
    """(partition values, row positions in input order) of each partition in ``data``."""
    if data.num_rows == 0:
        return
    if not partition_keys:
        yield (), np.arange(data.num_rows)
        return
    codes = partition_codes(data, partition_keys)
    order = group_order(codes)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(codes[order])) + 1, [len(order)]])
    for start, end in zip(starts[:-1], starts[1:], strict=True):
        positions = order[start:end]
        yield partition_values(data, partition_keys, int(positions[0])), positions


@dataclass(frozen=True)
class Routed:
    """The rows of one (partition, bucket) of an input batch: in input order, or sorted by key
    with ``arrival`` giving each row's rank in input order among the group's rows."""

    partition_values: tuple[Any, ...]
    bucket: int
    rows: pa.Table
    arrival: np.ndarray | None = None


@dataclass(frozen=True)
class RoutedBatch:
    """A batch reordered by (partition, bucket) and, inside each group, stably by the sort keys:
    group i is rows [starts[i], starts[i + 1]) of ``rows``, of partition ``values[i]`` and bucket
    ``buckets[i]``; ``arrival`` (with sort keys) is each row's rank in input order in its group."""

    rows: pa.Table
    starts: list[int]
    values: list[tuple[Any, ...]]
    buckets: list[int]
    arrival: np.ndarray | None

    def chunks(self) -> Iterator[Routed]:
        for i, (value, bucket) in enumerate(zip(self.values, self.buckets, strict=True)):
            start, end = self.starts[i], self.starts[i + 1]
            arrival = self.arrival[start:end] if self.arrival is not None else None
            yield Routed(value, bucket, self.rows.slice(start, end - start), arrival)


def route(data: pa.Table, buckets: np.ndarray, partition_keys: tuple[str, ...], *, sort_keys: Sequence[str] = ()) -> RoutedBatch:
    """Group rows by (partition values, bucket) with ONE stable sort by (group, ``sort_keys``)
    and one ``take`` of the whole batch: a batch spread over thousands of partitions costs no
    per-group take (see ``RoutedBatch``)."""
    n = data.num_rows
    radix = int(buckets.max()) + 1 if n else 1
    group = buckets.astype(np.int64) + partition_codes(data, partition_keys) * radix
    by_group = group_order(group)  # stable: each group's rows in input order
    grouped = group[by_group]
    starts = np.concatenate([[0], np.flatnonzero(grouped[1:] != grouped[:-1]) + 1, [n]]).astype(np.int64)
    if sort_keys:
        dense = np.empty(n, dtype=np.int64)
        dense[by_group] = np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(starts))
        keyed = data.select(list(sort_keys)).append_column("__group", from_numpy(dense))
        order = sort_order(keyed, ["__group", *sort_keys])
        # a row's rank in input order among its group's rows is its place in ``by_group`` minus
        # its group's start (both orders have the same group boundaries)
        place = np.empty(n, dtype=np.int64)
        place[by_group] = np.arange(n, dtype=np.int64)
        arrival: np.ndarray | None = place[order] - np.repeat(starts[:-1], np.diff(starts))
    else:
        order, arrival = by_group, None
    ordered = data.take(indices(order))
    heads = indices(starts[:-1])
    if partition_keys:
        columns = [ordered.column(k).take(heads).to_pylist() for k in partition_keys]
        values = list(zip(*columns, strict=True))
    else:
        values = [()] * (len(starts) - 1)
    return RoutedBatch(ordered, starts.tolist(), values, buckets[order][starts[:-1]].tolist(), arrival)


def split_by_partition_and_bucket(
    data: pa.Table,
    buckets: np.ndarray,
    partition_keys: tuple[str, ...],
    *,
    sort_keys: Sequence[str] = (),
    pool: Executor | None = None,
) -> Iterator[Routed]:
    """Group rows by (partition values, bucket); inside each group rows are in input order, or
    stably sorted by ``sort_keys`` with their input-order ranks (``Routed.arrival``): a bucket
    writer holding one such chunk needs no sort and ``take`` of its own. Each group is a
    zero-copy slice of one reordered batch (``route``); ``pool`` is no longer needed."""
    del pool
    n = data.num_rows
    if n == 0:
        return
    if not sort_keys:
        radix = int(buckets.max()) + 1
        group = buckets.astype(np.int64) + partition_codes(data, partition_keys) * radix
        if bool((group == group[0]).all()):
            yield Routed(partition_values(data, partition_keys, 0), int(buckets[0]), data)
            return
    yield from route(data, buckets, partition_keys, sort_keys=sort_keys).chunks()
