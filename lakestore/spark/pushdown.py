"""Spark's filter pushdown into the ``paimon`` source: Spark filters as lakestore predicates.

Only scalar literals of types whose Arrow comparison matches Spark's are pushed (timestamps and
decimals stay in Spark: their Python values compare under different time zone/scale rules).
Spark pushes filters into Python data sources from pyspark 4.1 on (``lakestore.spark.compat``):
this module names pyspark's filter classes only when it is handed one.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pyspark.sql import datasource as ds  # its Filter classes: pyspark >= 4.1, looked up when a filter is pushed

from lakestore.meta.schema import TableSchema
from lakestore.read.predicate import Predicate, col

_PUSHABLE_VALUES = (bool, int, float, str, date)
_PUSHABLE_TYPES = frozenset({"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "CHAR", "VARCHAR", "DATE"})


def _pushable_value(value: Any) -> bool:
    return value is not None and type(value) in _PUSHABLE_VALUES


def pushable_columns(schema: TableSchema) -> set[str]:
    """The columns whose filters are pushed (types compared alike by Arrow and Spark)."""
    return {f.name for f in schema.fields if f.type.root in _PUSHABLE_TYPES}


def to_predicate(spark_filter: ds.Filter, pushable_columns: set[str]) -> Predicate | None:
    """The lakestore predicate of one Spark filter, or None if it is not pushed."""
    attribute = getattr(spark_filter, "attribute", None)
    if isinstance(spark_filter, ds.Not):
        inner = spark_filter.child
        if isinstance(inner, ds.EqualTo):
            pred = to_predicate(inner, pushable_columns)
            return None if pred is None else ~pred
        return None
    if attribute is None or len(attribute) != 1 or attribute[0] not in pushable_columns:
        return None
    column = col(attribute[0])
    if isinstance(spark_filter, ds.IsNull):
        return column.is_null()
    if isinstance(spark_filter, ds.IsNotNull):
        return column.is_not_null()
    if isinstance(spark_filter, ds.In):
        values = list(spark_filter.value)
        return column.isin(values) if values and all(_pushable_value(v) for v in values) else None
    value = getattr(spark_filter, "value", None)
    if not _pushable_value(value):
        return None
    if isinstance(spark_filter, ds.EqualTo):
        return column == value
    if isinstance(spark_filter, ds.GreaterThan):
        return column > value
    if isinstance(spark_filter, ds.GreaterThanOrEqual):
        return column >= value
    if isinstance(spark_filter, ds.LessThan):
        return column < value
    if isinstance(spark_filter, ds.LessThanOrEqual):
        return column <= value
    return None
