"""Which Paimon schemas Iceberg-compatible metadata (``metadata.iceberg.storage``, written by
``lakestore/iceberg``) can describe: checked before a table with that option is written, so a
commit never lands whose Iceberg metadata cannot follow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from lakestore.format.types import DataType

if TYPE_CHECKING:
    from lakestore.meta.schema import TableSchema

# Partition key types published as identity partition fields (their Avro type in manifests).
PARTITION_ROOTS = frozenset(
    {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "CHAR", "VARCHAR", "BINARY", "VARBINARY", "DATE"}
)
# Column types Paimon 2.0's Iceberg compatibility describes (IcebergDataField.toTypeObject).
_COLUMN_ROOTS = PARTITION_ROOTS | {"TIME", "DECIMAL", "TIMESTAMP", "TIMESTAMP_LTZ", "ARRAY", "MAP", "MULTISET", "ROW"}


def iceberg_enabled(options: Mapping[str, str]) -> bool:
    return str(options.get("metadata.iceberg.storage") or "disabled").strip().lower() != "disabled"


def _type_problem(dtype: DataType) -> str | None:
    if dtype.root not in _COLUMN_ROOTS:
        return f"type {dtype.root} has no Iceberg counterpart"
    if dtype.root == "TIME" and not 0 <= (dtype.precision or 0) <= 3:
        return "Iceberg-compatible metadata takes TIME with precision 0 to 3"
    if dtype.root in ("TIMESTAMP", "TIMESTAMP_LTZ") and not 3 <= (dtype.precision if dtype.precision is not None else 6) <= 9:
        return "Iceberg-compatible metadata takes TIMESTAMP with precision 3 to 9"
    for child in dtype.children():
        problem = _type_problem(child)
        if problem is not None:
            return problem
    return None


def iceberg_refusal(schema: TableSchema) -> str | None:
    """Why the table's Iceberg metadata cannot be written (None: it can, or the option is off)."""
    if not iceberg_enabled(schema.options):
        return None
    for name in schema.partition_keys:
        dtype = schema.field(name).type
        if dtype.root not in PARTITION_ROOTS:
            return f"metadata.iceberg.storage: partition column {name!r} of type {dtype.root} is not published by lakestore"
    for f in schema.fields:
        problem = _type_problem(f.type)
        if problem is not None:
            return f"metadata.iceberg.storage: column {f.name!r}: {problem}"
    return None
