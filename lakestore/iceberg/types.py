"""Paimon types as Iceberg sees them, as Paimon 2.0's Iceberg compatibility maps them: the schema
JSON of ``v<N>.metadata.json``, the Avro type of a partition field in manifests, and Iceberg's
single-value binary form of statistics and partition bounds."""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from typing import Any

from lakestore.errors import UnsupportedTableError
from lakestore.format.types import DataField, DataType
from lakestore.meta.schema import TableSchema

# Paimon's SpecialFields: ids of list elements and map keys/values, derived from the field's id.
_STRUCTURED_BASE = (2**31 - 1) // 4
_DEPTH_LIMIT = 1 << 10
# Iceberg's partition field ids start here (Paimon's IcebergPartitionField.FIRST_FIELD_ID).
FIRST_PARTITION_FIELD_ID = 1000
# Types without bounds in Iceberg manifests.
_NO_BOUNDS = frozenset({"ARRAY", "MAP", "ROW", "MULTISET", "VARIANT", "VECTOR", "BLOB"})
# Partition types lakestore publishes (Avro type of the partition record's field).
_PARTITION_AVRO: dict[str, Any] = {
    "BOOLEAN": "boolean",
    "TINYINT": "int",
    "SMALLINT": "int",
    "INT": "int",
    "BIGINT": "long",
    "FLOAT": "float",
    "DOUBLE": "double",
    "CHAR": "string",
    "VARCHAR": "string",
    "BINARY": "bytes",
    "VARBINARY": "bytes",
    "DATE": {"type": "int", "logicalType": "date"},
}
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def _refuse(what: str) -> UnsupportedTableError:
    return UnsupportedTableError(f"Iceberg-compatible metadata (metadata.iceberg.storage): {what}")


def iceberg_type(dtype: DataType, field_id: int, depth: int = 0) -> Any:
    """The Iceberg type (a string, or a dict for nested types) of a Paimon type."""
    root = dtype.root
    simple = {
        "BOOLEAN": "boolean",
        "TINYINT": "int",
        "SMALLINT": "int",
        "INT": "int",
        "BIGINT": "long",
        "FLOAT": "float",
        "DOUBLE": "double",
        "DATE": "date",
        "CHAR": "string",
        "VARCHAR": "string",
        "BINARY": "binary",
        "VARBINARY": "binary",
    }
    if root in simple:
        return simple[root]
    if root == "TIME":
        if not 0 <= (dtype.precision or 0) <= 3:
            raise _refuse("TIME columns are published with precision 0 to 3 only")
        return "time"
    if root == "DECIMAL":
        return f"decimal({dtype.precision}, {dtype.scale})"
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        precision = dtype.precision if dtype.precision is not None else 6
        if not 3 <= precision <= 9:
            raise _refuse("TIMESTAMP columns are published with precision 3 to 9 only")
        base = "timestamp" if root == "TIMESTAMP" else "timestamptz"
        return f"{base}_ns" if precision >= 7 else base
    if root == "ARRAY":
        assert dtype.element is not None
        return {
            "type": "list",
            "element-id": _STRUCTURED_BASE + field_id * _DEPTH_LIMIT + depth + 1,
            "element-required": not dtype.element.nullable,
            "element": iceberg_type(dtype.element, field_id, depth + 1),
        }
    if root in ("MAP", "MULTISET"):
        key = dtype.key if root == "MAP" else dtype.element
        assert key is not None
        value_type: Any = "int"
        value_required = True
        if root == "MAP":
            assert dtype.value is not None
            value_type = iceberg_type(dtype.value, field_id, depth + 1)
            value_required = not dtype.value.nullable
        return {
            "type": "map",
            "key-id": _STRUCTURED_BASE - field_id * _DEPTH_LIMIT - depth - 1,
            "key": iceberg_type(key, field_id, depth + 1),
            "value-id": _STRUCTURED_BASE + field_id * _DEPTH_LIMIT + depth + 1,
            "value-required": value_required,
            "value": value_type,
        }
    if root == "ROW":
        return {"type": "struct", "fields": [iceberg_field(f) for f in dtype.fields]}
    raise _refuse(f"the {root} type has no Iceberg counterpart lakestore publishes")


def iceberg_field(field: DataField) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": field.id,
        "name": field.name,
        "required": not field.type.nullable,
        "type": iceberg_type(field.type, field.id),
    }
    if field.description is not None:
        out["doc"] = field.description
    return out


def iceberg_schema(schema: TableSchema) -> dict[str, Any]:
    """``{"type": "struct", "schema-id", "fields"}`` of a Paimon schema (field ids kept)."""
    return {"type": "struct", "schema-id": schema.id, "fields": [iceberg_field(f) for f in schema.fields]}


def highest_field_id(schema: dict[str, Any]) -> int:
    """The highest top-level field id (Paimon's ``last-column-id``)."""
    return max((int(f["id"]) for f in schema["fields"]), default=0)


def partition_fields(schema: TableSchema) -> list[dict[str, Any]]:
    """Identity partition fields of the partition keys, field ids from 1000 (Paimon's spec 0)."""
    out = []
    for offset, name in enumerate(schema.partition_keys):
        field = schema.field(name)
        if field.type.root not in _PARTITION_AVRO:
            raise _refuse(f"partition column {name!r} of type {field.type.root} is not published")
        out.append({"name": name, "transform": "identity", "source-id": field.id, "field-id": FIRST_PARTITION_FIELD_ID + offset})
    return out


def partition_avro_type(dtype: DataType) -> Any:
    return _PARTITION_AVRO[dtype.root]


def partition_avro_value(dtype: DataType, value: Any) -> Any:
    """A decoded partition value as fastavro writes it into the partition record."""
    if value is None:
        return None
    if dtype.root == "DATE" and isinstance(value, dt.date):
        return (value - _EPOCH_DATE).days
    return value


def to_bytes(dtype: DataType, value: Any) -> bytes:
    """Iceberg's single-value serialization of a decoded Paimon value (lower/upper bounds)."""
    root = dtype.root
    if root == "BOOLEAN":
        return b"\x01" if value else b"\x00"
    if root in ("TINYINT", "SMALLINT", "INT"):
        return struct.pack("<i", int(value))
    if root == "DATE":
        days = (value - _EPOCH_DATE).days if isinstance(value, dt.date) else int(value)
        return struct.pack("<i", days)
    if root == "BIGINT":
        return struct.pack("<q", int(value))
    if root == "FLOAT":
        return struct.pack("<f", float(value))
    if root == "DOUBLE":
        return struct.pack("<d", float(value))
    if dtype.is_string:
        return str(value).encode("utf-8")
    if dtype.is_binary:
        return bytes(value)
    if root == "DECIMAL":
        unscaled = int(decimal.Decimal(value).scaleb(dtype.scale or 0))
        length = max(1, (unscaled + (unscaled < 0)).bit_length() // 8 + 1)
        return unscaled.to_bytes(length, "big", signed=True)
    if dtype.is_timestamp:
        if not 3 <= (dtype.precision if dtype.precision is not None else 6) <= 6:
            raise _refuse("bounds of TIMESTAMP columns with precision above 6 are not published")
        naive = value.replace(tzinfo=None) if value.tzinfo is not None else value
        delta = naive - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        return struct.pack("<q", micros)
    if root == "TIME":
        return struct.pack("<q", int(value) * 1000)
    raise _refuse(f"bounds of {root} columns are not published")


def has_bounds(dtype: DataType) -> bool:
    return dtype.root not in _NO_BOUNDS


def from_bytes(dtype: DataType, raw: bytes) -> Any:
    """The inverse of ``to_bytes`` for partition types (partition summaries of manifests)."""
    root = dtype.root
    if root == "BOOLEAN":
        return raw[0] != 0
    if root in ("TINYINT", "SMALLINT", "INT"):
        return struct.unpack("<i", raw)[0]
    if root == "DATE":
        return _EPOCH_DATE + dt.timedelta(days=struct.unpack("<i", raw)[0])
    if root == "BIGINT":
        return struct.unpack("<q", raw)[0]
    if root == "FLOAT":
        return struct.unpack("<f", raw)[0]
    if root == "DOUBLE":
        return struct.unpack("<d", raw)[0]
    if dtype.is_string:
        return raw.decode("utf-8")
    return bytes(raw)
