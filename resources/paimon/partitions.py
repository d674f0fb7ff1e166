"""How an asset's Dagster partitions map onto a Paimon table's partition columns.

``partition_expr`` (definition metadata) names the column: a string for a single-dimension
partitions definition, ``{dimension: column}`` for a ``MultiPartitionsDefinition``; without it, a
single-dimension asset uses its one ``partition_keys`` column. A partition key becomes the
column's value by the column's type, as dagster-deltalake and dagster-iceberg do:

- time windows: a ``DATE`` column holds the window's start date (as both anchors; windows shorter
  than a day are refused there, since several would share a date), a ``STRING``
  column the partition key itself (``"2024-01-31"``, ``"2024-01-31-13:00"`` for hourly ones).
  The anchors refuse string columns for time windows; lakestore accepts them because Paimon
  partition directories are strings anyway. The anchors' ``TIMESTAMP`` columns (the window's
  start) are refused: lakestore, as Paimon, does not partition by timestamp columns;
- static and dynamic partitions: a ``STRING`` column holds the key; an integer column its
  integer value (an addition to the anchors, which accept strings only).

An output writes the exact partition keys it materializes (one spec per key, multi-partition
keys as one value per dimension). An input reads, per dimension, the values of the upstream
keys the downstream partition depends on (``col IN (...)``, ANDed across dimensions: the same
cross product of dimensions both anchors filter on).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import pyarrow as pa

from lakestore import Predicate, col
from resources.paimon.errors import PartitionMappingError


@dataclass(frozen=True)
class Dimension:
    """One Dagster partition dimension and the table column it maps to."""

    name: str  # the dimension's name ("" for a single-dimension definition)
    column: str
    definition: dg.PartitionsDefinition


def dimensions(partitions_def: dg.PartitionsDefinition | None, metadata: Mapping[str, Any], asset: str) -> list[Dimension]:
    """The dimensions of ``partitions_def`` with their columns (empty: an unpartitioned asset).

    Raises:
        PartitionMappingError: a partitioned asset without a usable ``partition_expr``.
    """
    if partitions_def is None:
        return []
    expr = metadata.get("partition_expr")
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        if not isinstance(expr, Mapping):
            raise PartitionMappingError(
                f"asset {asset} is multi-partitioned: give partition_expr as {{dimension: column}} for dimensions"
                f" {[d.name for d in partitions_def.partitions_defs]}"
            )
        missing = [d.name for d in partitions_def.partitions_defs if d.name not in expr]
        if missing:
            raise PartitionMappingError(f"asset {asset}: partition_expr maps no column for dimensions {missing}")
        return [Dimension(d.name, str(expr[d.name]), d.partitions_def) for d in partitions_def.partitions_defs]
    if expr is None:
        keys = list(metadata.get("partition_keys") or ())
        if len(keys) != 1:
            raise PartitionMappingError(f"asset {asset} is partitioned: give partition_expr (the table column its partition key maps to)")
        expr = keys[0]
    if not isinstance(expr, str):
        raise PartitionMappingError(f"asset {asset}: partition_expr must be a column name, got {expr!r}")
    return [Dimension("", expr, partitions_def)]


def _per_dimension(key: str, dims: Sequence[Dimension], partitions_def: dg.PartitionsDefinition) -> list[str]:
    if len(dims) == 1 and not isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return [key]
    if not isinstance(key, dg.MultiPartitionKey):
        assert isinstance(partitions_def, dg.MultiPartitionsDefinition)
        key = partitions_def.get_partition_key_from_str(key)
    by_dimension = key.keys_by_dimension
    return [by_dimension[d.name] for d in dims]


def column_value(dimension: Dimension, key: str, column_type: pa.DataType, table: str) -> Any:
    """The value partition ``key`` of ``dimension`` gives its column of ``column_type``.

    Raises:
        PartitionMappingError: a column type the key cannot become.
    """
    definition = dimension.definition
    if isinstance(definition, dg.TimeWindowPartitionsDefinition):
        if pa.types.is_string(column_type) or pa.types.is_large_string(column_type):
            return key
        window = definition.time_window_for_partition_key(key)
        if pa.types.is_date(column_type):
            if window.end - window.start < dt.timedelta(hours=23):  # a daily window across a DST change has 23
                # several windows would share one date, and overwriting one would replace them all
                raise PartitionMappingError(
                    f"table {table}: column {dimension.column!r} is a date, but partition {key!r} is shorter than a day:"
                    " map sub-daily partitions to a string column"
                )
            return window.start.date()
        raise PartitionMappingError(
            f"table {table}: column {dimension.column!r} of type {column_type} cannot hold time-window partitions:"
            " use a date or string column"
        )
    if pa.types.is_string(column_type) or pa.types.is_large_string(column_type):
        return key
    if pa.types.is_integer(column_type):
        try:
            return int(key)
        except ValueError as exc:
            raise PartitionMappingError(f"table {table}: partition key {key!r} is not an integer for column {dimension.column!r}") from exc
    raise PartitionMappingError(
        f"table {table}: column {dimension.column!r} of type {column_type} cannot hold partition keys: use a string column"
    )


def _column_type(schema: pa.Schema, column: str, table: str) -> pa.DataType:
    index = schema.get_field_index(column)
    if index < 0:
        raise PartitionMappingError(f"table {table}: partition_expr names {column!r}, which is not a column ({schema.names})")
    return schema.field(index).type


def partition_specs(
    dims: Sequence[Dimension], keys: Sequence[str], partitions_def: dg.PartitionsDefinition, schema: pa.Schema, table: str
) -> list[dict[str, Any]]:
    """One ``{column: value}`` spec per partition key (the partitions an output replaces).

    Raises:
        PartitionMappingError: a column missing from ``schema`` or of a type a key cannot become.
    """
    types = [_column_type(schema, d.column, table) for d in dims]
    specs = []
    for key in keys:
        parts = _per_dimension(key, dims, partitions_def)
        specs.append({d.column: column_value(d, part, t, table) for d, part, t in zip(dims, parts, types, strict=True)})
    return specs


def partition_filter(
    dims: Sequence[Dimension], keys: Sequence[str], partitions_def: dg.PartitionsDefinition, schema: pa.Schema, table: str
) -> Predicate | None:
    """The scan filter of an input's upstream partition keys: per dimension ``col IN (values)``,
    ANDed across dimensions (None: no dimension).

    Raises:
        PartitionMappingError: a column missing from ``schema`` or of a type a key cannot become.
    """
    specs = partition_specs(dims, keys, partitions_def, schema, table)
    predicate: Predicate | None = None
    for d in dims:
        values = list(dict.fromkeys(spec[d.column] for spec in specs))
        term = col(d.column) == values[0] if len(values) == 1 else col(d.column).isin(values)
        predicate = term if predicate is None else predicate & term
    return predicate


def check_partition_columns(dims: Sequence[Dimension], partition_keys: Sequence[str], table: str) -> None:
    """Every dimension's column must be one of the table's partition keys (an OVERWRITE snapshot
    replaces whole partitions only).

    Raises:
        PartitionMappingError: a column that is not a partition key.
    """
    outside = [d.column for d in dims if d.column not in partition_keys]
    if outside:
        raise PartitionMappingError(
            f"table {table}: partition_expr columns {outside} are not partition keys of the table ({list(partition_keys)});"
            " a partitioned asset needs a table partitioned by those columns"
        )
