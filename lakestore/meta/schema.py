"""Table schemas (``schema/schema-N``): fields with ids and Paimon type strings, keys, options."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from lakestore.errors import (
    CorruptMetadataError,
    LakestoreError,
    OptionError,
    SchemaMismatchError,
    UnsupportedTableError,
    UnsupportedTypeError,
)
from lakestore.format.types import UNSUPPORTED_ROOTS, DataField, DataType, UnsupportedPaimonTypeError, from_arrow, parse_type
from lakestore.io.fileio import FileIO
from lakestore.meta import options as opts

SCHEMA_VERSION = 3


@dataclass(frozen=True)
class TableSchema:
    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...]
    primary_keys: tuple[str, ...]
    options: Mapping[str, str]
    comment: str | None = None
    time_millis: int = field(default_factory=lambda: int(time.time() * 1000))

    # -- derived views ------------------------------------------------------------------------
    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaMismatchError(f"no column {name!r} in schema (columns: {self.field_names})")

    def types_of(self, names: Sequence[str]) -> list[DataType]:
        return [self.field(n).type for n in names]

    @property
    def trimmed_primary_keys(self) -> tuple[str, ...]:
        """Primary key minus partition keys: the key stored in data files as ``_KEY_*``."""
        trimmed = tuple(k for k in self.primary_keys if k not in self.partition_keys)
        return trimmed if trimmed else self.primary_keys

    @property
    def bucket_keys(self) -> tuple[str, ...]:
        explicit = self.core_options().bucket_key
        if explicit:
            return explicit
        return self.trimmed_primary_keys

    def core_options(self) -> opts.CoreOptions:
        return opts.CoreOptions(self.options, has_primary_key=bool(self.primary_keys))

    def arrow_schema(self) -> pa.Schema:
        return pa.schema([f.arrow_field() for f in self.fields])

    def require_supported(self, operation: str, *, table: str) -> None:
        """Refuse ``operation`` ("read", "write", "compact", "expire"...) by name when the table
        uses options lakestore cannot honour for it (see ``options.unsupported``), column types
        it cannot read or write (VARIANT, BLOB: every operation that reads or writes rows), or,
        for writes, column default values (Paimon's writers put a column's ``defaultValue`` in
        place of a written null; lakestore's do not)."""
        unsupported = opts.unsupported(self.options, primary_keys=self.primary_keys, partition_keys=self.partition_keys)
        opts.require_supported(unsupported, operation=operation, table=table)
        if operation in _ROW_OPERATIONS:
            for name, dtype in self._unsupported_types():
                raise UnsupportedPaimonTypeError(
                    f"cannot {operation} table {table}: column {name!r} has type {dtype}, which lakestore does not support"
                    f" ({UNSUPPORTED_ROOTS[dtype.root]})"
                )
        if operation == "write":
            defaults = [f.name for f in self.fields if f.default_value is not None] + [
                n.name for f in self.fields for n in f.type.nested_fields() if n.default_value is not None
            ]
            if defaults:
                raise UnsupportedTableError(
                    f"cannot write table {table}: columns {defaults} have a default value (Paimon 1.2's defaultValue), which"
                    " Paimon's writers put in place of written nulls; lakestore's writers do not"
                )

    def _unsupported_types(self) -> list[tuple[str, DataType]]:
        """(column, type) of every column or nested field whose type lakestore cannot handle."""
        out = []
        for f in self.fields:
            for dtype in _walk(f.type):
                if dtype.root in UNSUPPORTED_ROOTS:
                    out.append((f.name, dtype))
        return out

    @property
    def default_values(self) -> dict[str, str]:
        """Column name -> Paimon 1.2's ``defaultValue`` (SQL literal), for columns that have one."""
        return {f.name: f.default_value for f in self.fields if f.default_value is not None}

    # -- JSON ---------------------------------------------------------------------------------
    def to_json(self) -> str:
        doc = {
            "version": SCHEMA_VERSION,
            "id": self.id,
            "fields": [f.to_json() for f in self.fields],
            "highestFieldId": self.highest_field_id,
            "partitionKeys": list(self.partition_keys),
            "primaryKeys": list(self.primary_keys),
            "options": dict(self.options),
            "comment": self.comment,
            "timeMillis": self.time_millis,
        }
        return json.dumps(doc, indent=2)

    @classmethod
    def from_json(cls, text: str | bytes, *, source: str) -> TableSchema:
        # Paimon writes every value with one JSON type; anything else is damage, refused here by
        # name rather than coerced (str(None) would become a column or option called 'None').
        try:
            doc = json.loads(text)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
            fields = tuple(
                DataField(
                    _json_int(f, "id"),
                    _json_str(f, "name"),
                    _field_type(f, source),
                    _json_opt_str(f, "description"),
                    _json_opt_str(f, "defaultValue"),
                )
                for f in _json_list(doc, "fields")
            )
            options = doc["options"]
            if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
                raise ValueError("options is not an object of strings")
            names = [f.name for f in fields]
            # Fields of nested ROW types draw their ids from the same sequence as columns.
            ids = [f.id for f in fields] + [n.id for f in fields for n in f.type.nested_fields()]
            if len(set(names)) != len(names) or len(set(ids)) != len(ids):
                raise ValueError("duplicate field names or ids")
            keys = {}
            for attr, wire in (("partition_keys", "partitionKeys"), ("primary_keys", "primaryKeys")):
                keys[attr] = tuple(_json_str({"key": k}, "key") for k in _json_list(doc, wire))
                unknown = [k for k in keys[attr] if k not in names]
                if unknown:
                    raise ValueError(f"{wire} {unknown} are not fields")
            highest = _json_int(doc, "highestFieldId")
            if ids and highest < max(ids):
                raise ValueError(f"highestFieldId {highest} < a field id")
            time_millis = doc.get("timeMillis")
            schema = cls(
                id=_json_int(doc, "id"),
                fields=fields,
                highest_field_id=highest,
                options=dict(options),
                comment=_json_opt_str(doc, "comment"),
                time_millis=time_millis if isinstance(time_millis, int) and not isinstance(time_millis, bool) else 0,
                **keys,
            )
        except UnsupportedTypeError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, LakestoreError) as exc:
            raise CorruptMetadataError(source, f"invalid schema JSON: {exc!r}") from exc
        return schema


# operations that read or write rows (maintenance only moves files the manifests list)
_ROW_OPERATIONS = frozenset({"read", "write", "compact", "commit to"})


def _walk(dtype: DataType) -> list[DataType]:
    """A type and every type inside it."""
    out = [dtype]
    for child in dtype.children():
        out.extend(_walk(child))
    return out


def _field_type(doc: dict[str, Any], source: str) -> DataType:
    """A field's type; a well-formed type lakestore cannot handle (nested) is not corruption."""
    raw = doc["type"]
    try:
        return parse_type(raw)
    except UnsupportedTypeError as exc:
        if isinstance(raw, dict) and isinstance(doc.get("name"), str):
            raise UnsupportedTypeError(f"column {doc['name']!r} of the table at {source}: {exc}") from exc
        raise ValueError(str(exc)) from exc


def _json_int(doc: dict[str, Any], key: str) -> int:
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key!r} is not an integer: {value!r}")
    return value


def _json_str(doc: dict[str, Any], key: str) -> str:
    value = doc[key]
    if not isinstance(value, str):
        raise ValueError(f"{key!r} is not a string: {value!r}")
    return value


def _json_opt_str(doc: dict[str, Any], key: str) -> str | None:
    return _json_str(doc, key) if doc.get(key) is not None else None


def _json_list(doc: dict[str, Any], key: str) -> list[Any]:
    value = doc[key]
    if not isinstance(value, list):
        raise ValueError(f"{key!r} is not a list")
    return value


def new_schema(
    arrow_schema: pa.Schema,
    *,
    partition_keys: Sequence[str] = (),
    primary_keys: Sequence[str] = (),
    options: Mapping[str, str] | None = None,
    comment: str | None = None,
) -> TableSchema:
    """Validate user input and build schema 0. Primary-key columns become NOT NULL."""
    names = list(arrow_schema.names)
    if len(set(names)) != len(names):
        raise SchemaMismatchError(f"duplicate column names in {names}")
    for group, label in ((partition_keys, "partition key"), (primary_keys, "primary key")):
        for key in group:
            if key not in names:
                raise SchemaMismatchError(f"{label} {key!r} is not a column (columns: {names})")
    if primary_keys and not set(partition_keys) <= set(primary_keys):
        raise SchemaMismatchError(f"primary keys {list(primary_keys)} must contain all partition keys {list(partition_keys)}")
    checked = opts.validate(options or {}, strict=True)
    # Paimon's default: dynamic buckets for primary-key tables, bucket-unaware append tables
    checked.setdefault("bucket", "-1")
    checked.setdefault("file.format", "parquet")
    core = opts.CoreOptions(checked, has_primary_key=bool(primary_keys))
    if primary_keys and core.bucket == -1 and core.bucket_key:
        raise OptionError("'bucket-key' needs a fixed bucket count (dynamic buckets hash the primary key)")
    for key in core.bucket_key:
        if key not in names:
            raise OptionError(f"bucket-key {key!r} is not a column")
        if primary_keys and key not in primary_keys:
            raise OptionError(f"bucket-key {key!r} must be part of the primary key")
    if not primary_keys and core.bucket > 0 and not core.bucket_key:
        raise OptionError("an append table with fixed buckets needs option 'bucket-key'")
    if not primary_keys and core.bucket == -1 and core.bucket_key:
        raise OptionError("'bucket-key' needs a fixed bucket count")
    for key in core.sequence_fields:
        if key not in names:
            raise OptionError(f"sequence.field {key!r} is not a column")
    if core.changelog_producer != "none" and not primary_keys:
        raise OptionError("changelog-producer needs a primary key")
    if (core.sequence_fields or core.rowkind_field) and not primary_keys:
        raise OptionError("sequence.field and rowkind.field need a primary key")
    if core.rowkind_field is not None and core.rowkind_field not in names:
        raise OptionError(f"rowkind.field {core.rowkind_field!r} is not a column")
    if core.deletion_vectors:
        # Paimon's own refusals (SchemaValidation), and append tables, whose rows Paimon deletes
        # only through Spark's DELETE/UPDATE
        if not primary_keys:
            raise OptionError("deletion-vectors.enabled on an append table is not implemented (no row-level deletes)")
        if core.merge_engine == "first-row":
            raise OptionError("deletion-vectors.enabled does not apply to merge-engine first-row (it never deletes older rows)")
        if core.changelog_producer not in ("none", "input", "lookup"):
            raise OptionError("deletion-vectors.enabled works with changelog-producer none, input or lookup only")
    fields = []
    # Paimon numbers a column, then the fields of its nested ROW types (Schema.Builder.column).
    next_id = itertools.count()
    for f in arrow_schema:
        try:
            dtype = from_arrow(f.type, nullable=f.nullable)
        except UnsupportedTypeError as exc:
            raise UnsupportedTypeError(f"column {f.name!r}: {exc}") from exc
        if f.name in primary_keys:
            dtype = dtype.copy(nullable=False)
        description = None
        if f.metadata and b"comment" in f.metadata:
            description = f.metadata[b"comment"].decode()
        field_id = next(next_id)
        fields.append(DataField(field_id, f.name, dtype.with_field_ids(next_id), description))
    highest = max([f.id for f in fields] + [n.id for f in fields for n in f.type.nested_fields()], default=-1)
    by_name = {f.name: f for f in fields}
    # Keys are hashed, sorted and BinaryRow-encoded, which nested values cannot be.
    for role, keys in (
        ("primary key", primary_keys),
        ("partition key", partition_keys),
        ("bucket-key", core.bucket_key),
        ("sequence.field", core.sequence_fields),
    ):
        for key in keys:
            if by_name[key].type.is_nested:
                raise SchemaMismatchError(f"{role} {key!r} has the nested type {by_name[key].type}, which cannot be a key column")
    for key in partition_keys:
        root = next(f.type.root for f in fields if f.name == key)
        if root not in ("VARCHAR", "CHAR", "TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "BOOLEAN"):
            raise SchemaMismatchError(f"partition key {key!r} of type {root} is not supported as a partition column")
    return TableSchema(
        id=0,
        fields=tuple(fields),
        highest_field_id=highest,
        partition_keys=tuple(partition_keys),
        primary_keys=tuple(primary_keys),
        options=checked,
        comment=comment,
    )


class SchemaManager:
    """Reads and publishes ``schema/schema-N`` files of one table."""

    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.schema_dir = f"{table_path}/schema"
        self._cache: dict[int, TableSchema] = {}

    def path(self, schema_id: int) -> str:
        return f"{self.schema_dir}/schema-{schema_id}"

    def list_ids(self) -> list[int]:
        ids = []
        for name in self.file_io.list_names(self.schema_dir):
            if name.startswith("schema-") and name[7:].isascii() and name[7:].isdigit():
                ids.append(int(name[7:]))
        return sorted(ids)

    def get(self, schema_id: int) -> TableSchema:
        cached = self._cache.get(schema_id)
        if cached is None:
            path = self.path(schema_id)
            try:
                text = self.file_io.read_bytes(path)
            except FileNotFoundError as exc:
                raise CorruptMetadataError(path, "schema file is missing") from exc
            cached = TableSchema.from_json(text, source=path)
            # Options written by another engine must parse; what lakestore cannot honour is refused
            # per operation (``TableSchema.require_supported``), so such tables stay readable.
            try:
                opts.validate(cached.options, strict=False)
            except OptionError as exc:
                raise OptionError(f"{exc} (in {path})") from exc
            self._cache[schema_id] = cached
        return cached

    def latest(self) -> TableSchema | None:
        ids = self.list_ids()
        return self.get(ids[-1]) if ids else None

    def publish(self, schema: TableSchema) -> bool:
        """Create schema-N iff absent (atomic)."""
        return self.file_io.try_publish(self.path(schema.id), schema.to_json().encode())
