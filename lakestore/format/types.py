"""Paimon data types: their JSON type strings and their Arrow mapping.

Paimon writes a field's type as a string such as ``BIGINT NOT NULL`` or ``DECIMAL(10, 2)``.
Only primitive types are supported; nested types are refused with a typed error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import pyarrow as pa

from lakestore.errors import UnsupportedTypeError

_INTEGER_ROOTS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_MAX_CHAR_LENGTH = 2147483647


@dataclass(frozen=True, slots=True)
class DataType:
    """A Paimon primitive type. ``root`` is the canonical type name (``INT``, ``VARCHAR``...)."""

    root: str
    nullable: bool = True
    precision: int | None = None  # DECIMAL precision, TIMESTAMP precision
    scale: int | None = None  # DECIMAL scale
    length: int | None = None  # CHAR/VARCHAR/BINARY/VARBINARY length

    # -- constructors -------------------------------------------------------------------------
    def copy(self, *, nullable: bool) -> DataType:
        return replace(self, nullable=nullable)

    # -- classification -----------------------------------------------------------------------
    @property
    def is_string(self) -> bool:
        return self.root in ("CHAR", "VARCHAR")

    @property
    def is_binary(self) -> bool:
        return self.root in ("BINARY", "VARBINARY")

    @property
    def is_integer(self) -> bool:
        return self.root in _INTEGER_ROOTS

    @property
    def is_timestamp(self) -> bool:
        return self.root in ("TIMESTAMP", "TIMESTAMP_LTZ")

    @property
    def is_compact_decimal(self) -> bool:
        return self.root == "DECIMAL" and (self.precision or 0) <= 18

    @property
    def is_compact_timestamp(self) -> bool:
        return self.is_timestamp and (self.precision or 0) <= 3

    # -- Paimon type strings ------------------------------------------------------------------
    def to_paimon(self) -> str:
        root = self.root
        if root == "VARCHAR":
            text = "STRING" if self.length == _MAX_CHAR_LENGTH else f"VARCHAR({self.length})"
        elif root == "VARBINARY":
            text = "BYTES" if self.length == _MAX_CHAR_LENGTH else f"VARBINARY({self.length})"
        elif root in ("CHAR", "BINARY"):
            text = f"{root}({self.length})"
        elif root == "DECIMAL":
            text = f"DECIMAL({self.precision}, {self.scale})"
        elif root == "TIMESTAMP":
            text = f"TIMESTAMP({self.precision})"
        elif root == "TIMESTAMP_LTZ":
            text = f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"
        elif root == "TIME":
            text = f"TIME({self.precision})"
        else:
            text = root
        return text if self.nullable else f"{text} NOT NULL"

    def to_arrow(self) -> pa.DataType:
        root = self.root
        simple = {
            "BOOLEAN": pa.bool_(),
            "TINYINT": pa.int8(),
            "SMALLINT": pa.int16(),
            "INT": pa.int32(),
            "BIGINT": pa.int64(),
            "FLOAT": pa.float32(),
            "DOUBLE": pa.float64(),
            "DATE": pa.date32(),
        }
        if root in simple:
            return simple[root]
        if self.is_string:
            return pa.string()
        if self.is_binary:
            return pa.binary()
        if root == "DECIMAL":
            return pa.decimal128(self.precision, self.scale)
        if self.is_timestamp:
            unit = _timestamp_unit(self.precision or 0)
            return pa.timestamp(unit, tz="UTC" if root == "TIMESTAMP_LTZ" else None)
        if root == "TIME":
            return pa.time32("ms")
        raise UnsupportedTypeError(f"type {self.to_paimon()} has no Arrow mapping")

    def __str__(self) -> str:
        return self.to_paimon()


def _timestamp_unit(precision: int) -> str:
    if precision <= 3:
        return "ms"
    if precision <= 6:
        return "us"
    return "ns"


_PARAMS = re.compile(r"^([A-Z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*(.*)$")


def parse_type(text: str) -> DataType:
    """Parse a Paimon type string (``DECIMAL(10, 2) NOT NULL``, ``TIMESTAMP(6) WITH LOCAL TIME ZONE``)."""
    if isinstance(text, dict) and isinstance(text.get("type"), str):
        # Paimon writes ARRAY, MAP, MULTISET and ROW types as JSON objects.
        root = text["type"].split("<")[0].split(" ")[0].upper()
        raise UnsupportedTypeError(f"nested type {root} is not supported by lakestore yet: {text!r}")
    if not isinstance(text, str):
        raise UnsupportedTypeError(f"a type must be a string, got {type(text).__name__}: {text!r}")
    upper = text.strip().upper()
    nullable = True
    if upper.endswith(" NOT NULL"):
        nullable = False
        upper = upper[: -len(" NOT NULL")].strip()
    elif upper.endswith(" NULL"):
        upper = upper[: -len(" NULL")].strip()
    match = _PARAMS.match(upper)
    if match is None:
        raise UnsupportedTypeError(f"cannot parse type {text!r}")
    name, p1, p2, rest = match.group(1).strip(), match.group(2), match.group(3), match.group(4).strip()
    first = int(p1) if p1 is not None else None
    second = int(p2) if p2 is not None else None
    if name == "TIMESTAMP_LTZ" or (name == "TIMESTAMP" and rest == "WITH LOCAL TIME ZONE"):
        return DataType("TIMESTAMP_LTZ", nullable, precision=6 if first is None else first)
    if name == "TIMESTAMP WITH LOCAL TIME ZONE":
        return DataType("TIMESTAMP_LTZ", nullable, precision=6 if first is None else first)
    if rest:
        raise UnsupportedTypeError(f"cannot parse type {text!r}")
    if name in ("BOOLEAN", "TINYINT", "SMALLINT", "BIGINT", "FLOAT", "DOUBLE", "DATE"):
        return DataType(name, nullable)
    if name in ("INT", "INTEGER"):
        return DataType("INT", nullable)
    if name == "STRING":
        return DataType("VARCHAR", nullable, length=_MAX_CHAR_LENGTH)
    if name == "BYTES":
        return DataType("VARBINARY", nullable, length=_MAX_CHAR_LENGTH)
    if name in ("VARCHAR", "CHAR", "VARBINARY", "BINARY"):
        default = _MAX_CHAR_LENGTH if name.startswith("VAR") else 1
        return DataType(name, nullable, length=default if first is None else first)
    if name in ("DECIMAL", "NUMERIC", "DEC"):
        precision = 10 if first is None else first
        scale = 0 if second is None else second
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise UnsupportedTypeError(f"invalid decimal {text!r}")
        return DataType("DECIMAL", nullable, precision=precision, scale=scale)
    if name == "TIMESTAMP":
        return DataType("TIMESTAMP", nullable, precision=6 if first is None else first)
    if name == "TIME":
        return DataType("TIME", nullable, precision=0 if first is None else first)
    raise UnsupportedTypeError(f"type {text!r} is not supported by lakestore (primitive types only)")


def from_arrow(arrow_type: pa.DataType, *, nullable: bool = True) -> DataType:
    """The Paimon type of an Arrow type. Refuses types Paimon cannot store losslessly."""
    t = arrow_type
    if pa.types.is_boolean(t):
        return DataType("BOOLEAN", nullable)
    for check, root in (
        (pa.types.is_int8, "TINYINT"),
        (pa.types.is_int16, "SMALLINT"),
        (pa.types.is_int32, "INT"),
        (pa.types.is_int64, "BIGINT"),
        (pa.types.is_float32, "FLOAT"),
        (pa.types.is_float64, "DOUBLE"),
        (pa.types.is_date32, "DATE"),
    ):
        if check(t):
            return DataType(root, nullable)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return DataType("VARCHAR", nullable, length=_MAX_CHAR_LENGTH)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return DataType("VARBINARY", nullable, length=_MAX_CHAR_LENGTH)
    if pa.types.is_decimal(t) and t.precision <= 38:
        return DataType("DECIMAL", nullable, precision=t.precision, scale=t.scale)
    if pa.types.is_timestamp(t):
        precision = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        root = "TIMESTAMP" if t.tz is None else "TIMESTAMP_LTZ"
        return DataType(root, nullable, precision=precision)
    raise UnsupportedTypeError(f"Arrow type {t} has no Paimon primitive equivalent")
