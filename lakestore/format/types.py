"""Paimon data types: their JSON type strings and their Arrow mapping.

Paimon writes a primitive field type as a string such as ``BIGINT NOT NULL`` or ``DECIMAL(10, 2)``
and a nested one as a JSON object whose ``type`` carries the nullability (``ARRAY NOT NULL``):
``{"type": "ARRAY", "element": ...}``, ``{"type": "MULTISET", "element": ...}``,
``{"type": "MAP", "key": ..., "value": ...}`` and ``{"type": "ROW", "fields": [{"id", "name", "type"}]}``.
The fields of a nested ROW carry ids from the table's id sequence (they count toward
``highestFieldId``).

Arrow mapping: ARRAY -> list, MAP -> map, MULTISET -> map<element, INT NOT NULL> (Paimon's
representation: element -> count), ROW -> struct, VECTOR (Paimon 1.4: a fixed number of
non-null numbers or booleans, ``{"type": "VECTOR", "element": "FLOAT", "length": 3}``, stored
in Parquet as a list) -> fixed_size_list.

Types of later Paimon versions without a faithful Arrow type are parsed, so a table using them
is refused by name (``UnsupportedPaimonTypeError``, an ``UnsupportedTableError``) rather than
taken for a corrupt schema: VARIANT (1.1; Parquet group of value and metadata bytes, no Arrow
type) and BLOB (1.4; its values live in separate ``.blob`` files, not in the data files).

A field may carry ``defaultValue`` (Paimon 1.2): a SQL literal Paimon's writers put in place of
a null written to that column (``TableWriteImpl``); readers never apply it, so files without the
column read null.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from lakestore.errors import UnsupportedPaimonTypeError, UnsupportedTypeError

_INTEGER_ROOTS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_MAX_CHAR_LENGTH = 2147483647
NESTED_ROOTS = ("ARRAY", "MAP", "MULTISET", "ROW", "VECTOR")
# Paimon types lakestore parses but cannot read or write (no faithful Arrow type, or values
# outside the data files), with the Paimon version that introduced them and why
UNSUPPORTED_ROOTS = {
    "VARIANT": "Paimon 1.1's semi-structured VARIANT has no Arrow type",
    "BLOB": "Paimon 1.4's BLOB values are kept in separate .blob files",
}
_VECTOR_ELEMENTS = ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")


@dataclass(frozen=True, slots=True)
class DataType:
    """A Paimon type. ``root`` is the canonical type name (``INT``, ``VARCHAR``, ``ARRAY``...);
    nested types carry their children in ``element`` (ARRAY, MULTISET), ``key``/``value`` (MAP)
    or ``fields`` (ROW)."""

    root: str
    nullable: bool = True
    precision: int | None = None  # DECIMAL, TIMESTAMP and TIME precision
    scale: int | None = None  # DECIMAL scale
    length: int | None = None  # CHAR/VARCHAR/BINARY/VARBINARY length, VECTOR dimension
    element: DataType | None = None  # ARRAY, MULTISET, VECTOR
    key: DataType | None = None  # MAP
    value: DataType | None = None  # MAP
    fields: tuple[DataField, ...] = ()  # ROW

    # -- constructors -------------------------------------------------------------------------
    def copy(self, *, nullable: bool) -> DataType:
        return replace(self, nullable=nullable)

    @classmethod
    def array(cls, element: DataType, *, nullable: bool = True) -> DataType:
        return cls("ARRAY", nullable, element=element)

    @classmethod
    def multiset(cls, element: DataType, *, nullable: bool = True) -> DataType:
        return cls("MULTISET", nullable, element=element)

    @classmethod
    def vector(cls, element: DataType, length: int, *, nullable: bool = True) -> DataType:
        if element.root not in _VECTOR_ELEMENTS:
            raise UnsupportedTypeError(f"invalid VECTOR element type {element}")
        if length < 1:
            raise UnsupportedTypeError(f"invalid VECTOR length {length}")
        return cls("VECTOR", nullable, length=length, element=element)

    @classmethod
    def map(cls, key: DataType, value: DataType, *, nullable: bool = True) -> DataType:
        return cls("MAP", nullable, key=key, value=value)

    @classmethod
    def row(cls, fields: Sequence[DataField], *, nullable: bool = True) -> DataType:
        return cls("ROW", nullable, fields=tuple(fields))

    @property
    def is_nested(self) -> bool:
        return self.root in NESTED_ROOTS

    def children(self) -> tuple[DataType, ...]:
        if self.root in ("ARRAY", "MULTISET", "VECTOR"):
            assert self.element is not None
            return (self.element,)
        if self.root == "MAP":
            assert self.key is not None and self.value is not None
            return (self.key, self.value)
        return tuple(f.type for f in self.fields)

    def nested_fields(self) -> Iterator[DataField]:
        """Every ROW field inside this type, depth first."""
        for f in self.fields:
            yield f
            yield from f.type.nested_fields()
        if self.root != "ROW":
            for child in self.children():
                yield from child.nested_fields()

    def with_field_ids(self, next_id: Iterator[int]) -> DataType:
        """This type with the ids of its nested ROW fields drawn from ``next_id`` as Paimon
        assigns them (``ReassignFieldId``): a field's own type first, then the field."""
        if not self.is_nested:
            return self
        if self.root == "ROW":
            fields = []
            for f in self.fields:
                inner = f.type.with_field_ids(next_id)
                fields.append(DataField(next(next_id), f.name, inner, f.description))
            return replace(self, fields=tuple(fields))
        if self.root == "MAP":
            assert self.key is not None and self.value is not None
            return replace(self, key=self.key.with_field_ids(next_id), value=self.value.with_field_ids(next_id))
        assert self.element is not None
        return replace(self, element=self.element.with_field_ids(next_id))

    def erased(self) -> DataType:
        """This type with every nullability and field id erased (structural comparison)."""
        if not self.is_nested:
            return self.copy(nullable=True)
        if self.root == "ROW":
            return replace(self, nullable=True, fields=tuple(DataField(0, f.name, f.type.erased()) for f in self.fields))
        if self.root == "MAP":
            assert self.key is not None and self.value is not None
            return replace(self, nullable=True, key=self.key.erased(), value=self.value.erased())
        assert self.element is not None
        return replace(self, nullable=True, element=self.element.erased())

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
    def to_paimon(self) -> Any:
        """The schema-JSON form: a string for primitive types, an object for nested ones."""
        if self.is_nested:
            return self._nested_json()
        return self._sql()

    def _nested_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.root if self.nullable else f"{self.root} NOT NULL"}
        if self.root in ("ARRAY", "MULTISET", "VECTOR"):
            assert self.element is not None
            out["element"] = self.element.to_paimon()
            if self.root == "VECTOR":
                out["length"] = self.length
        elif self.root == "MAP":
            assert self.key is not None and self.value is not None
            out["key"] = self.key.to_paimon()
            out["value"] = self.value.to_paimon()
        else:
            out["fields"] = [f.to_json() for f in self.fields]
        return out

    def _sql(self) -> str:
        root = self.root
        suffix = "" if self.nullable else " NOT NULL"
        if root in ("ARRAY", "MULTISET"):
            assert self.element is not None
            return f"{root}<{self.element._sql()}>{suffix}"
        if root == "MAP":
            assert self.key is not None and self.value is not None
            return f"MAP<{self.key._sql()}, {self.value._sql()}>{suffix}"
        if root == "ROW":
            return "ROW<" + ", ".join(f"{f.name} {f.type._sql()}" for f in self.fields) + f">{suffix}"
        if root == "VECTOR":
            assert self.element is not None
            return f"VECTOR<{self.element._sql()}, {self.length}>{suffix}"
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
        return text + suffix

    def to_arrow(self) -> pa.DataType:
        root = self.root
        if root in UNSUPPORTED_ROOTS:
            raise UnsupportedPaimonTypeError(f"type {self} is not supported by lakestore ({UNSUPPORTED_ROOTS[root]})")
        if self.is_nested:
            return self._nested_arrow()
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
        raise UnsupportedTypeError(f"type {self} has no Arrow mapping")

    def _nested_arrow(self) -> pa.DataType:
        if self.root == "VECTOR":
            assert self.element is not None and self.length is not None
            return pa.list_(pa.field("element", self.element.to_arrow(), nullable=self.element.nullable), self.length)
        if self.root == "ARRAY":
            assert self.element is not None
            return pa.list_(pa.field("item", self.element.to_arrow(), nullable=self.element.nullable))
        if self.root == "MULTISET":
            assert self.element is not None
            return pa.map_(pa.field("key", self.element.to_arrow(), nullable=False), pa.field("value", pa.int32(), nullable=False))
        if self.root == "MAP":
            assert self.key is not None and self.value is not None
            return pa.map_(
                pa.field("key", self.key.to_arrow(), nullable=False), pa.field("value", self.value.to_arrow(), nullable=self.value.nullable)
            )
        return pa.struct([f.arrow_field() for f in self.fields])

    def __str__(self) -> str:
        return self._sql()


@dataclass(frozen=True, slots=True)
class DataField:
    """A field of a table schema or of a nested ROW type; every id comes from the table's one
    field id sequence."""

    id: int
    name: str
    type: DataType
    description: str | None = None
    default_value: str | None = None  # Paimon 1.2's defaultValue: a SQL literal writers put for nulls

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "type": self.type.to_paimon()}
        if self.description is not None:
            out["description"] = self.description
        if self.default_value is not None:
            out["defaultValue"] = self.default_value
        return out

    def arrow_field(self) -> pa.Field:
        return pa.field(self.name, self.type.to_arrow(), nullable=self.type.nullable)


def _timestamp_unit(precision: int) -> str:
    if precision <= 3:
        return "ms"
    if precision <= 6:
        return "us"
    return "ns"


_PARAMS = re.compile(r"^([A-Z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*(.*)$")


def parse_type(text: Any) -> DataType:
    """Parse a Paimon type: a string (``DECIMAL(10, 2) NOT NULL``, ``TIMESTAMP(6) WITH LOCAL TIME
    ZONE``) or a nested type's JSON object. Malformed input raises ``ValueError``/``KeyError``."""
    if isinstance(text, dict):
        return _parse_nested(text)
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
    if name in UNSUPPORTED_ROOTS and first is None:
        return DataType(name, nullable)
    raise UnsupportedTypeError(f"type {text!r} is not supported by lakestore")


def _parse_nested(doc: dict[str, Any]) -> DataType:
    type_text = doc["type"]
    if not isinstance(type_text, str):
        raise ValueError(f"nested type without a type name: {doc!r}")
    upper = type_text.strip().upper()
    root = upper.split(" ")[0].split("<")[0]
    # Paimon Java reads the nullability from the type name; pypaimon also writes "nullable".
    nullable = "NOT NULL" not in upper
    if isinstance(doc.get("nullable"), bool):
        nullable = doc["nullable"]
    if root in ("ARRAY", "MULTISET"):
        return DataType(root, nullable, element=parse_type(doc["element"]))
    if root == "VECTOR":
        length = doc["length"]
        if isinstance(length, bool) or not isinstance(length, int):
            raise ValueError(f"VECTOR length is not an integer: {doc!r}")
        return DataType.vector(parse_type(doc["element"]), length, nullable=nullable)
    if root == "MAP":
        return DataType.map(parse_type(doc["key"]), parse_type(doc["value"]), nullable=nullable)
    if root == "ROW":
        raw_fields = doc["fields"]
        if not isinstance(raw_fields, list):
            raise ValueError(f"ROW fields are not a list: {doc!r}")
        fields = []
        for f in raw_fields:
            field_id, name, description, default = f["id"], f["name"], f.get("description"), f.get("defaultValue")
            if isinstance(field_id, bool) or not isinstance(field_id, int) or not isinstance(name, str):
                raise ValueError(f"invalid ROW field {f!r}")
            if description is not None and not isinstance(description, str):
                raise ValueError(f"invalid ROW field description {f!r}")
            if default is not None and not isinstance(default, str):
                raise ValueError(f"invalid ROW field defaultValue {f!r}")
            fields.append(DataField(field_id, name, parse_type(f["type"]), description, default))
        if len({f.name for f in fields}) != len(fields):
            raise ValueError(f"duplicate ROW field names in {doc!r}")
        return DataType.row(fields, nullable=nullable)
    raise UnsupportedTypeError(f"nested type {root} is not supported by lakestore: {doc!r}")


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
    if pa.types.is_time32(t) or pa.types.is_time64(t):
        # TIME(p) declares the unit; Paimon keeps every TIME(p) value as milliseconds of the day
        # (parquet INT32 TIME(MILLIS)), so lakestore reads it as time32[ms] and writes cast to it
        # safely: a sub-millisecond value is refused, never truncated.
        return DataType("TIME", nullable, precision={"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit])
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        item = t.value_field
        return DataType.array(from_arrow(item.type, nullable=item.nullable), nullable=nullable)
    if pa.types.is_fixed_size_list(t):
        item = t.value_field
        return DataType.vector(from_arrow(item.type, nullable=item.nullable), t.list_size, nullable=nullable)
    if pa.types.is_map(t):
        # A map key is never null in Paimon (nor in Arrow).
        key, item = t.key_field, t.item_field
        return DataType.map(from_arrow(key.type, nullable=False), from_arrow(item.type, nullable=item.nullable), nullable=nullable)
    if pa.types.is_struct(t):
        names = [f.name for f in t]
        if not names or len(set(names)) != len(names):
            raise UnsupportedTypeError(f"Arrow struct {t} needs at least one field and unique field names to be a Paimon ROW")
        # Ids are placeholders: the table assigns them (``DataType.with_field_ids``).
        fields = [DataField(0, f.name, from_arrow(f.type, nullable=f.nullable)) for f in t]
        return DataType.row(fields, nullable=nullable)
    raise UnsupportedTypeError(f"Arrow type {t} has no Paimon equivalent")
