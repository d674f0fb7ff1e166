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
from lakestore.format.fileindex.registry import file_index_options
from lakestore.format.types import UNSUPPORTED_ROOTS, DataField, DataType, UnsupportedPaimonTypeError, from_arrow, parse_type
from lakestore.io.fileio import FileIO
from lakestore.io.publish import MetadataPublisher
from lakestore.meta import options as opts
from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.iceberg_types import iceberg_refusal
from lakestore.meta.option_keys import FALLBACK_KEYS

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

    @property
    def bucket_mode(self) -> BucketMode:
        """How rows are assigned to buckets (Paimon's ``BucketMode``), from the keys and ``bucket``."""
        return BucketMode.of(primary_keys=self.primary_keys, partition_keys=self.partition_keys, bucket=self.core_options().bucket)

    @property
    def reads_skip_level0(self) -> bool:
        """Whether Paimon's readers of this table never see level 0: a primary-key table with the
        ``first-row`` merge engine (its writers move each commit's rows up) or deletion vectors
        (level-0 rows are not yet deduplicated against the levels above). Its compactions move
        level 0 up, and its streams' full phase starts at level 1."""
        if not self.primary_keys:
            return False
        options = self.core_options()
        return options.deletion_vectors or options.merge_engine == "first-row"

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
        if operation in _ROW_OPERATIONS and operation != "read":
            refusal = iceberg_refusal(self)
            if refusal is not None:
                raise UnsupportedTableError(f"cannot {operation} table {table}: {refusal}", options=("metadata.iceberg.storage",))
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
            # Paimon writes no comment when there is none; it reads ``"comment": null`` as "null"
            **({"comment": self.comment} if self.comment is not None else {}),
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


# Paimon's SpecialFields: names its data files, readers and system tables use for their own
# fields (SYSTEM_FIELD_NAMES; case-sensitive) and the prefix of the key copies in data files.
SYSTEM_FIELD_NAMES = frozenset({"_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind", "_ROW_ID"})
KEY_FIELD_PREFIX = "_KEY_"

_INT_MAX = 2**31 - 1
_RECORD_TIME_ROOTS = ("INT", "BIGINT", "TIMESTAMP", "TIMESTAMP_LTZ")
_LAST_NON_NULL = "last_non_null_value"
_DEFAULT_AGG = "default-aggregate-function"

# Paimon's SchemaValidation.validateStartupMode: per startup mode, (keys of which exactly one must
# be set, keys that must be absent); every other mode (latest, latest-full...) takes none of them.
_SCAN_KEYS = (
    "scan.timestamp-millis",
    "scan.file-creation-time-millis",
    "scan.timestamp",
    "scan.snapshot-id",
    "scan.tag-name",
    "incremental-between-timestamp",
    "incremental-between",
    "incremental-to-auto-tag",
)
_STARTUP_RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "from-timestamp": (
        ("scan.timestamp-millis", "scan.timestamp"),
        ("scan.snapshot-id", "scan.file-creation-time-millis", "scan.tag-name")
        + ("incremental-between-timestamp", "incremental-between", "incremental-to-auto-tag"),
    ),
    "from-snapshot": (
        ("scan.snapshot-id", "scan.tag-name", "scan.watermark"),
        ("scan.timestamp-millis", "scan.timestamp", "scan.file-creation-time-millis")
        + ("incremental-between-timestamp", "incremental-between", "incremental-to-auto-tag"),
    ),
    "incremental": (
        ("incremental-between", "incremental-between-timestamp", "incremental-to-auto-tag"),
        ("scan.snapshot-id", "scan.timestamp-millis", "scan.file-creation-time-millis", "scan.timestamp", "scan.tag-name"),
    ),
    "from-snapshot-full": (
        ("scan.snapshot-id",),
        ("scan.timestamp-millis", "scan.timestamp", "scan.file-creation-time-millis", "scan.tag-name")
        + ("incremental-between-timestamp", "incremental-between", "incremental-to-auto-tag"),
    ),
    "from-file-creation-time": (
        ("scan.file-creation-time-millis",),
        ("scan.snapshot-id", "scan.timestamp-millis", "scan.tag-name")
        + ("incremental-between-timestamp", "incremental-between", "incremental-to-auto-tag"),
    ),
}


def validate_table_schema(schema: TableSchema) -> None:
    """Refuse a schema Paimon 2.0 refuses (``SchemaValidation.validateTableSchema``, which Paimon
    runs on table creation and on every ``alter``, and the merge-function factories it calls), so
    lakestore never writes a table Java will not open or write. Only Paimon's rules live here:
    tables Java created pass. ``SchemaMismatchError`` names a column, ``OptionError`` an option.
    Option values are read raw (with Paimon's fallback keys): a value lakestore cannot parse is
    refused elsewhere, or belongs to another engine, and is skipped here."""
    raw = dict(schema.options)
    names = schema.field_names
    pk = schema.primary_keys
    for name in names:
        if name in SYSTEM_FIELD_NAMES:
            raise SchemaMismatchError(
                f"column {name!r} has the name of a Paimon system field ({sorted(SYSTEM_FIELD_NAMES)}): Paimon refuses such"
                " tables (its data files and readers add a field of that name)"
            )
        if name.startswith(KEY_FIELD_PREFIX):
            raise SchemaMismatchError(
                f"column {name!r} starts with {KEY_FIELD_PREFIX!r}, the prefix of the key fields in Paimon's data files:"
                " Paimon refuses such tables"
            )
    merge_engine = _text(raw, "merge-engine", "deduplicate")
    producer = _text(raw, "changelog-producer", "none")
    bucket = _int_option(raw, "bucket", -1)
    sequence_fields = [f.strip() for f in (_get(raw, "sequence.field") or "").split(",") if f.strip()]
    _validate_fields_options(schema, raw)
    for name in sequence_fields:
        if name not in names:
            raise OptionError(f"sequence.field {name!r} is not a column (columns: {names})")
        if f"fields.{name}.aggregate-function" in raw:
            raise OptionError(f"sequence.field {name!r} cannot have an aggregate function ('fields.{name}.aggregate-function')")
        if sequence_fields.count(name) > 1:
            raise OptionError(f"sequence.field names {name!r} more than once")
    if sequence_fields and merge_engine == "first-row":
        raise OptionError("sequence.field cannot be used with merge-engine first-row (Paimon keeps the first row by arrival)")
    if sequence_fields and pk and schema.partition_keys and not set(schema.partition_keys) <= set(pk):
        raise OptionError("sequence.field cannot be used when the primary key lacks partition keys (cross-partition update)")
    if pk and merge_engine == "partial-update":
        _validate_partial_update(schema, raw)
    if producer != "none" and not pk:
        raise OptionError(f"changelog-producer {producer!r} needs a primary key")
    if _get(raw, "full-compaction.delta-commits") is not None:
        if producer == "lookup":
            raise OptionError(
                "full-compaction.delta-commits does not work with changelog-producer 'lookup': use changelog-producer"
                " 'full-compaction' for periodic full compaction with changelog, or remove full-compaction.delta-commits"
            )
        if not pk and bucket == -1:
            raise OptionError("full-compaction.delta-commits needs fixed buckets on an append table (bucket = -1 here)")
    for prefix, min_default, max_default in (
        ("snapshot", 10, _INT_MAX),
        ("changelog", _int_option(raw, "snapshot.num-retained.min", 10), _int_option(raw, "snapshot.num-retained.max", _INT_MAX)),
    ):
        low = _int_option(raw, f"{prefix}.num-retained.min", min_default)
        high = _int_option(raw, f"{prefix}.num-retained.max", max_default)
        if low is not None and low < 1:
            raise OptionError(f"{prefix}.num-retained.min must be at least 1 (is {low})")
        if low is not None and high is not None and low > high:
            unset = [k for k in (f"{prefix}.num-retained.min", f"{prefix}.num-retained.max") if k not in raw]
            fallback = "snapshot.num-retained.* or Paimon's default" if prefix == "changelog" else "Paimon's default"
            hint = f" ({' and '.join(unset)} not set: {fallback} applies)" if unset else ""
            raise OptionError(f"{prefix}.num-retained.min ({low}) must not be larger than {prefix}.num-retained.max ({high}){hint}")
    time_field = _get(raw, "record-level.time-field")
    if time_field is not None:
        if time_field not in names:
            raise OptionError(f"record-level.time-field {time_field!r} is not a column")
        root = schema.field(time_field).type.root
        if root not in _RECORD_TIME_ROOTS:
            raise OptionError(f"record-level.time-field {time_field!r} has type {root}; it must be INT, BIGINT or TIMESTAMP")
    if merge_engine == "first-row" and producer not in ("none", "lookup"):
        raise OptionError(f"changelog-producer {producer!r} does not work with merge-engine first-row (only 'none' and 'lookup')")
    rowkind = _get(raw, "rowkind.field")
    if rowkind is not None and rowkind not in names:
        raise OptionError(f"rowkind.field {rowkind!r} is not a column")
    if _flag(raw, "deletion-vectors.enabled"):
        if producer not in ("none", "input", "lookup"):
            raise OptionError(f"deletion-vectors.enabled works with changelog-producer none, input or lookup, not {producer!r}")
        if merge_engine == "first-row":
            raise OptionError("deletion-vectors.enabled does not apply to merge-engine first-row (it never deletes older rows)")
    _validate_startup_mode(raw)
    if _flag(raw, "row-tracking.enabled"):
        if pk:
            raise OptionError("row-tracking.enabled cannot be set on a table with a primary key")
        if bucket != -1:
            raise OptionError(f"row-tracking.enabled needs bucket = -1 (is {bucket})")
    if _flag(raw, "data-evolution.enabled") and not _flag(raw, "row-tracking.enabled"):
        raise OptionError("data-evolution.enabled needs row-tracking.enabled = true")


def _get(options: Mapping[str, str], key: str) -> str | None:
    """An option's raw value, looked up under Paimon's fallback keys too."""
    if key in options:
        return options[key]
    return next((options[k] for k, primary in FALLBACK_KEYS.items() if primary == key and k in options), None)


def _text(options: Mapping[str, str], key: str, default: str) -> str:
    value = _get(options, key)
    return default if value is None else value.strip().lower()


def _flag(options: Mapping[str, str], key: str) -> bool:
    return _text(options, key, "false") == "true"


def _int_option(options: Mapping[str, str], key: str, default: int | None) -> int | None:
    value = _get(options, key)
    if value is None:
        return default
    try:
        return int(value.strip())
    except ValueError:
        return None


def _validate_fields_options(schema: TableSchema, raw: Mapping[str, str]) -> None:
    """``fields.<a>[,<b>...].<suffix>`` must name columns (``fields.default-aggregate-function``
    aside); a path into a ROW column (``fields.<row>.<member>.<suffix>``) is refused."""
    names = schema.field_names
    for key in raw:
        if not key.startswith("fields."):
            continue
        segments = key.split(".")
        columns = segments[1].split(",")
        for column in columns:
            if column != _DEFAULT_AGG and column not in names:
                raise OptionError(f"option {key!r} names {column!r}, which is not a column (columns: {names})")
        if len(segments) > 3 and len(columns) == 1 and columns[0] in names and schema.field(columns[0]).type.root == "ROW":
            raise OptionError(f"option {key!r}: per-field options cannot address a member of the ROW column {columns[0]!r}")


def _validate_partial_update(schema: TableSchema, raw: Mapping[str, str]) -> None:
    """The checks of Paimon's PartialUpdateMergeFunction factory."""
    names = schema.field_names
    pk = schema.primary_keys
    sequence_fields: list[str] = []
    protected: dict[str, str] = {}  # member -> its group's option key
    suffix = ".sequence-group"
    for key, value in raw.items():
        if not (key.startswith("fields.") and key.endswith(suffix)):
            continue
        group = key[len("fields.") : -len(suffix)].split(",")
        for name in group + value.split(","):
            if name not in names:
                raise OptionError(f"option {key!r} names {name!r}, which is not a column (columns: {names})")
            if name in pk:
                raise OptionError(f"option {key!r} names the primary-key column {name!r}, which cannot be in a sequence group")
        for member in value.split(","):
            if member in protected:
                raise OptionError(f"column {member!r} is in two sequence groups ({protected[member]!r} and {key!r})")
            protected[member] = key
        sequence_fields.extend(group)
    default = _get(raw, f"fields.{_DEFAULT_AGG}")
    for name in names:
        if name in sequence_fields or name in pk:
            continue
        function = raw.get(f"fields.{name}.aggregate-function", default)
        if function is not None and function != _LAST_NON_NULL and name not in protected:
            raise OptionError(f"aggregate function {function!r} of column {name!r} needs the column in a sequence group")
    remove_on_delete = _flag(raw, "partial-update.remove-record-on-delete")
    ignore_delete = _flag(raw, "ignore-delete")
    on_group = _get(raw, "partial-update.remove-record-on-sequence-group")
    if remove_on_delete and ignore_delete:
        raise OptionError("ignore-delete and partial-update.remove-record-on-delete contradict each other")
    if on_group is not None and ignore_delete:
        raise OptionError("ignore-delete and partial-update.remove-record-on-sequence-group contradict each other")
    if remove_on_delete and protected:
        raise OptionError("sequence groups and partial-update.remove-record-on-delete contradict each other")
    if on_group is not None and not set(on_group.split(",")) <= set(sequence_fields):
        raise OptionError(f"partial-update.remove-record-on-sequence-group {on_group!r} must name sequence fields of sequence groups")


def _validate_startup_mode(raw: Mapping[str, str]) -> None:
    mode = _text(raw, "scan.mode", "default")
    if mode == "default":
        present = {k for k in (*_SCAN_KEYS, "scan.watermark", "scan.version", "scan.creation-time-millis") if _get(raw, k) is not None}
        if present & {"scan.timestamp-millis", "scan.timestamp"}:
            mode = "from-timestamp"
        elif present & {"scan.snapshot-id", "scan.tag-name", "scan.watermark", "scan.version"}:
            mode = "from-snapshot"
        elif "scan.file-creation-time-millis" in present:
            mode = "from-file-creation-time"
        elif "scan.creation-time-millis" in present:
            mode = "from-creation-timestamp"
        elif present & {"incremental-between", "incremental-between-timestamp"}:
            mode = "incremental"
    required, forbidden = _STARTUP_RULES.get(mode, ((), _SCAN_KEYS))
    if required:
        given = [k for k in required if _get(raw, k) is not None]
        if len(given) != 1:
            raise OptionError(f"scan.mode {mode!r} needs exactly one of {list(required)} (set: {given})")
    for key in forbidden:
        if _get(raw, key) is not None:
            raise OptionError(f"option {key!r} cannot be set with scan.mode {mode!r}")


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
        repeated = sorted({k for k in group if list(group).count(k) > 1})
        if repeated:
            raise SchemaMismatchError(f"{label}s {list(group)} name {repeated} more than once (Paimon refuses duplicate key columns)")
        for key in group:
            if key not in names:
                raise SchemaMismatchError(f"{label} {key!r} is not a column (columns: {names})")
    if primary_keys and not set(partition_keys) <= set(primary_keys) and str((options or {}).get("bucket", "-1")).strip() != "-1":
        # bucket = -1: Paimon's cross-partition upsert (lakestore/write/cross_partition.py)
        raise SchemaMismatchError(
            f"primary keys {list(primary_keys)} must contain all partition keys {list(partition_keys)} unless bucket = -1"
        )
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
    if not primary_keys and core.bucket == -2:
        raise OptionError("bucket=-2 (postpone buckets) needs a primary key: Paimon refuses it on append tables")
    if not primary_keys and core.bucket > 0 and not core.bucket_key:
        raise OptionError("an append table with fixed buckets needs option 'bucket-key'")
    if not primary_keys and core.bucket == -1 and core.bucket_key:
        raise OptionError("'bucket-key' needs a fixed bucket count")
    if (core.sequence_fields or core.rowkind_field) and not primary_keys:
        raise OptionError("sequence.field and rowkind.field need a primary key")
    if core.deletion_vectors and not primary_keys:
        # Paimon deletes rows of append tables only through Spark's DELETE/UPDATE
        raise OptionError("deletion-vectors.enabled on an append table is not implemented (no row-level deletes)")
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
    schema = TableSchema(
        id=0,
        fields=tuple(fields),
        highest_field_id=highest,
        partition_keys=tuple(partition_keys),
        primary_keys=tuple(primary_keys),
        options=checked,
        comment=comment,
    )
    validate_table_schema(schema)
    # the file indexes the options ask for: columns that exist, types the index supports, index
    # types lakestore writes (Paimon's SchemaValidation.validateFileIndex checks the first two)
    file_index_options(schema.options, {f.name: f.type for f in fields})
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
    return schema


class SchemaManager:
    """Reads and publishes ``schema/schema-N`` files of one table. ``publisher``: how ``publish``
    creates a schema file (the table's, with the catalog lock when the catalog has one; None:
    ``file_io`` without a lock, which only reads need)."""

    def __init__(self, file_io: FileIO, table_path: str, *, publisher: MetadataPublisher | None = None) -> None:
        self.file_io = file_io
        self.publisher = publisher or MetadataPublisher(file_io)
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
        """Create schema-N iff absent (atomic), through ``publisher``.

        Returns:
            True when this call created it; False when another writer published N first.

        Raises:
            UnsafePublishError: object storage with neither the catalog lock nor conditional writes.
            LockAcquireTimeoutError: the catalog lock was not acquired.
            OSError: the file system failed.
        """
        return self.publisher.try_publish(self.path(schema.id), schema.to_json().encode())
