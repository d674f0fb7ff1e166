"""Paimon types <-> Spark types, and the Arrow layout Spark expects of ``mapInArrow`` output.

Spark keeps timestamps in microseconds, so Paimon TIMESTAMP(0..6) round-trips exactly and
TIMESTAMP(7..9) is truncated to microseconds when read into Spark (Spark has no finer unit).
CHAR/VARCHAR become StringType: Spark's CharType/VarcharType exist only in catalog schemas, not
in DataFrames. TIME becomes TimeType, which pyspark 4.0 lacks (``lakestore.spark.compat``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import types as T

from lakestore.errors import UnsupportedTypeError
from lakestore.format.types import DataType
from lakestore.meta.schema import TableSchema
from lakestore.spark import compat

_SIMPLE: dict[str, T.DataType] = {
    "BOOLEAN": T.BooleanType(),
    "TINYINT": T.ByteType(),
    "SMALLINT": T.ShortType(),
    "INT": T.IntegerType(),
    "BIGINT": T.LongType(),
    "FLOAT": T.FloatType(),
    "DOUBLE": T.DoubleType(),
    "DATE": T.DateType(),
    "CHAR": T.StringType(),
    "VARCHAR": T.StringType(),
    "BINARY": T.BinaryType(),
    "VARBINARY": T.BinaryType(),
    "TIMESTAMP": T.TimestampNTZType(),
    "TIMESTAMP_LTZ": T.TimestampType(),
}


def spark_type(data_type: DataType) -> T.DataType:
    """The Spark type of one Paimon type (nullability is carried by the StructField).

    Raises:
        UnsupportedTypeError: a type Spark has no type for (TIME on pyspark 4.0).
    """
    simple = _SIMPLE.get(data_type.root)
    if simple is not None:
        return simple
    if data_type.root == "DECIMAL":
        assert data_type.precision is not None and data_type.scale is not None
        return T.DecimalType(data_type.precision, data_type.scale)
    if data_type.root == "TIME":
        return compat.time_type(min(data_type.precision or 0, 6))
    if data_type.is_nested:
        return _nested_spark_type(data_type)
    raise UnsupportedTypeError(f"type {data_type} has no Spark mapping")


def _nested_spark_type(data_type: DataType) -> T.DataType:
    if data_type.root == "ARRAY":
        assert data_type.element is not None
        return T.ArrayType(spark_type(data_type.element), containsNull=data_type.element.nullable)
    if data_type.root == "MULTISET":  # Paimon's representation: element -> count
        assert data_type.element is not None
        return T.MapType(spark_type(data_type.element), T.IntegerType(), valueContainsNull=False)
    if data_type.root == "MAP":
        assert data_type.key is not None and data_type.value is not None
        return T.MapType(spark_type(data_type.key), spark_type(data_type.value), valueContainsNull=data_type.value.nullable)
    return T.StructType([T.StructField(f.name, spark_type(f.type), nullable=f.type.nullable) for f in data_type.fields])


def spark_schema(schema: TableSchema, columns: Sequence[str] | None = None) -> T.StructType:
    """The Spark StructType of a table schema (optionally of ``columns`` only, in that order)."""
    names = list(columns) if columns is not None else schema.field_names
    by_name = {f.name: f for f in schema.fields}
    return T.StructType([T.StructField(n, spark_type(by_name[n].type), nullable=by_name[n].type.nullable) for n in names])


def spark_arrow_type(data_type: DataType) -> pa.DataType:
    """The Arrow type Spark's JVM side reads for ``spark_type(data_type)``.

    The time zone label of TIMESTAMP_LTZ is irrelevant to Spark (it reads UTC instants); UTC is
    used so the cast from lakestore's ``timestamp[*, tz=UTC]`` is a pure unit change.
    """
    root = data_type.root
    if root == "TIMESTAMP":
        return pa.timestamp("us")
    if root == "TIMESTAMP_LTZ":
        return pa.timestamp("us", tz="UTC")
    if root == "TIME":
        return pa.time64("ns")
    if data_type.is_nested:
        # Timestamps and times nested anywhere need Spark's units too.
        el, key, value = data_type.element, data_type.key, data_type.value
        if root == "ARRAY" and el is not None:
            return pa.list_(pa.field("item", spark_arrow_type(el), nullable=el.nullable))
        if root == "MULTISET" and el is not None:
            return pa.map_(pa.field("key", spark_arrow_type(el), nullable=False), pa.field("value", pa.int32(), nullable=False))
        if root == "MAP" and key is not None and value is not None:
            return pa.map_(
                pa.field("key", spark_arrow_type(key), nullable=False), pa.field("value", spark_arrow_type(value), nullable=value.nullable)
            )
        return pa.struct([pa.field(f.name, spark_arrow_type(f.type), nullable=f.type.nullable) for f in data_type.fields])
    return data_type.to_arrow()


def spark_arrow_schema(schema: TableSchema, columns: Sequence[str]) -> pa.Schema:
    by_name = {f.name: f for f in schema.fields}
    return pa.schema([pa.field(n, spark_arrow_type(by_name[n].type), nullable=by_name[n].type.nullable) for n in columns])


def to_spark_arrow(data: pa.Table, target: pa.Schema) -> pa.Table:
    """Cast lakestore's Arrow output to the layout Spark expects (only timestamp/time units change).

    ``mapInArrow`` does not check output types, so a mismatch would be misread, not rejected.
    Nanosecond timestamps are truncated to microseconds (the unsafe cast), which is Spark's limit.
    """
    if data.schema.equals(target, check_metadata=False):
        return data
    columns = []
    for field in target:
        column = data.column(field.name)
        if column.type != field.type:
            column = column.cast(field.type, safe=False)
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=target)
