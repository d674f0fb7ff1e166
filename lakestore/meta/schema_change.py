"""Schema changes for ``Catalog.alter_table``: frozen dataclasses applied to a schema to produce
schema N+1 (Paimon's SchemaManager.commitChanges).

Rules (Paimon's): a new column is nullable and takes ``highestFieldId + 1``; a rename keeps the
field id, so old data files keep their data; a dropped id is never reused; types only widen
(integers to wider integers, FLOAT to DOUBLE, integers to FLOAT/DOUBLE/DECIMAL that hold them,
DECIMAL precision up at equal scale, VARCHAR/CHAR/VARBINARY longer, NOT NULL to nullable);
partition and primary-key columns cannot be dropped, renamed or retyped; options that fix the
on-disk layout (bucket, bucket-key, merge-engine, sequence.field, ...) cannot change.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import pyarrow as pa

from lakestore.errors import OptionError, SchemaChangeError, SchemaMismatchError
from lakestore.format.types import DataType, from_arrow, parse_type
from lakestore.meta import options as opts
from lakestore.meta.schema import DataField, TableSchema, validate_table_schema

TypeLike: TypeAlias = "DataType | pa.DataType | str"


@dataclass(frozen=True)
class AddColumn:
    name: str
    type: TypeLike
    comment: str | None = None
    after: str | None = None  # place after this column; None = last (unless first)
    first: bool = False


@dataclass(frozen=True)
class DropColumn:
    name: str


@dataclass(frozen=True)
class RenameColumn:
    name: str
    new_name: str


@dataclass(frozen=True)
class UpdateColumnType:
    name: str
    type: TypeLike


@dataclass(frozen=True)
class UpdateComment:
    """``column=None``: the table comment; otherwise that column's comment."""

    comment: str | None
    column: str | None = None


@dataclass(frozen=True)
class SetOption:
    key: str
    value: str


@dataclass(frozen=True)
class RemoveOption:
    key: str


SchemaChange = AddColumn | DropColumn | RenameColumn | UpdateColumnType | UpdateComment | SetOption | RemoveOption

# Options that decide how existing files were written; changing them would misread the table.
IMMUTABLE_OPTIONS = frozenset(
    {
        "bucket",
        "bucket-key",
        "merge-engine",
        "sequence.field",
        "rowkind.field",
        "deletion-vectors.enabled",  # readers would merge levels the writers deduplicated by vectors, or vice versa
        "partition.default-name",
        "partition.legacy-name",
        "primary-key",
        "partition",
        # Paimon's @Immutable merge options
        "partial-update.remove-record-on-delete",
        "partial-update.remove-record-on-sequence-group",
        "aggregation.remove-record-on-delete",
    }
)
# Paimon's SchemaManager: with deletion-vectors.modifiable = true set on the table before the
# change, deletion-vectors.enabled may be switched (readers then follow the new mode: rows only in
# level 0 are hidden until a compaction when switched on, merged on read when switched off).
_MODIFIABLE_WITH = {"deletion-vectors.enabled": "deletion-vectors.modifiable"}


def _modifiable(key: str, options: Mapping[str, str]) -> bool:
    guard = _MODIFIABLE_WITH.get(key)
    return guard is not None and str(options.get(guard, "false")).strip().lower() == "true"


# Paimon's SchemaManager: these may be switched on, never off again
_ONLY_ON = ("ignore-update-before",)

_INT_RANK = {"TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4}
_INT_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}


def to_data_type(value: TypeLike) -> DataType:
    if isinstance(value, DataType):
        return value
    if isinstance(value, pa.DataType):
        return from_arrow(value)
    return parse_type(value)


def is_widening(old: DataType, new: DataType) -> bool:
    """True when every value of ``old`` is exactly representable in ``new``."""
    if not old.nullable and new.nullable:
        old = old.copy(nullable=True)
    if old.nullable and not new.nullable:
        return False  # existing nulls would break NOT NULL
    if old == new:
        return True
    if old.is_integer and new.is_integer:
        return _INT_RANK[new.root] >= _INT_RANK[old.root]
    if old.is_integer and new.root == "DOUBLE":
        return old.root != "BIGINT"  # a double holds 53 bits
    if old.is_integer and new.root == "FLOAT":
        return old.root in ("TINYINT", "SMALLINT")
    if old.root == "FLOAT" and new.root == "DOUBLE":
        return True
    if old.is_integer and new.root == "DECIMAL":
        return (new.precision or 0) - (new.scale or 0) >= _INT_DIGITS[old.root]
    if old.root == "DECIMAL" and new.root == "DECIMAL":
        return new.scale == old.scale and (new.precision or 0) >= (old.precision or 0)
    if old.root in ("CHAR", "VARCHAR") and new.root == "VARCHAR":
        return (new.length or 0) >= (old.length or 0)
    if old.root in ("BINARY", "VARBINARY") and new.root == "VARBINARY":
        return (new.length or 0) >= (old.length or 0)
    if old.is_timestamp and new.root == old.root:
        return (new.precision or 0) >= (old.precision or 0)
    return False


def apply_changes(schema: TableSchema, changes: Sequence[SchemaChange]) -> TableSchema:
    """Schema ``schema.id + 1`` with ``changes`` applied, or ``SchemaChangeError``."""
    fields = list(schema.fields)
    highest = schema.highest_field_id
    options = dict(schema.options)
    comment = schema.comment
    keys = set(schema.partition_keys) | set(schema.primary_keys)

    def index(name: str) -> int:
        for i, f in enumerate(fields):
            if f.name == name:
                return i
        raise SchemaChangeError(f"column {name!r} does not exist (columns: {[f.name for f in fields]})")

    def names() -> set[str]:
        return {f.name for f in fields}

    for change in changes:
        if isinstance(change, AddColumn):
            if change.name in names():
                raise SchemaChangeError(f"column {change.name!r} already exists")
            dtype = to_data_type(change.type)
            if not dtype.nullable:
                raise SchemaChangeError(f"added column {change.name!r} must be nullable (old rows have no value)")
            dtype.to_arrow()  # refuse types lakestore cannot read
            highest += 1
            # The fields of a nested ROW take the ids after the column's (Paimon's ReassignFieldId).
            next_id = itertools.count(highest + 1)
            new = DataField(highest, change.name, dtype.with_field_ids(next_id), change.comment)
            highest = max([highest] + [n.id for n in new.type.nested_fields()])
            if change.first:
                fields.insert(0, new)
            elif change.after is not None:
                fields.insert(index(change.after) + 1, new)
            else:
                fields.append(new)
        elif isinstance(change, DropColumn):
            i = index(change.name)
            if change.name in keys:
                raise SchemaChangeError(f"cannot drop {change.name!r}: it is a partition or primary key column")
            if _option_columns(options) & {change.name}:
                raise SchemaChangeError(f"cannot drop {change.name!r}: a table option names it")
            if len(fields) == 1:
                raise SchemaChangeError("cannot drop the last column")
            del fields[i]
        elif isinstance(change, RenameColumn):
            i = index(change.name)
            if change.new_name in names():
                raise SchemaChangeError(f"column {change.new_name!r} already exists")
            if change.name in keys:
                raise SchemaChangeError(f"cannot rename {change.name!r}: it is a partition or primary key column")
            if change.name in _option_columns(options):
                raise SchemaChangeError(f"cannot rename {change.name!r}: a table option names it")
            fields[i] = dataclasses.replace(fields[i], name=change.new_name)
        elif isinstance(change, UpdateColumnType):
            i = index(change.name)
            old = fields[i].type
            new_type = to_data_type(change.type)
            if change.name in keys:
                raise SchemaChangeError(f"cannot change the type of {change.name!r}: it is a partition or primary key column")
            if old.is_nested or new_type.is_nested:
                if old.erased() != new_type.erased() or (old.nullable and not new_type.nullable):
                    raise SchemaChangeError(
                        f"cannot change the type of nested column {change.name!r} from {old} to {new_type}:"
                        " lakestore only allows making it nullable"
                    )
                new_type = old.copy(nullable=new_type.nullable)  # keeps the nested field ids
            elif not is_widening(old, new_type):
                raise SchemaChangeError(f"cannot change {change.name!r} from {old} to {new_type}: only widening changes are allowed")
            new_type.to_arrow()
            fields[i] = dataclasses.replace(fields[i], type=new_type)
        elif isinstance(change, UpdateComment):
            if change.column is None:
                comment = change.comment
            else:
                i = index(change.column)
                fields[i] = dataclasses.replace(fields[i], description=change.comment)
        elif isinstance(change, (SetOption, RemoveOption)):
            if change.key in IMMUTABLE_OPTIONS and not _modifiable(change.key, schema.options):
                raise SchemaChangeError(f"option {change.key!r} cannot be changed on an existing table")
            if change.key in _ONLY_ON and options.get(change.key, "false").lower() == "true":
                turned_off = isinstance(change, RemoveOption) or str(change.value).strip().lower() != "true"
                if turned_off:
                    raise SchemaChangeError(f"Cannot change {change.key} from true to false (as Paimon)")
            if isinstance(change, SetOption):
                try:
                    options.update(opts.validate({change.key: change.value}, strict=True))
                except OptionError as exc:
                    raise SchemaChangeError(str(exc)) from exc
            else:
                options.pop(change.key, None)
        else:
            raise SchemaChangeError(f"unknown schema change {change!r}")
    new_schema = TableSchema(
        id=schema.id + 1,
        fields=tuple(fields),
        highest_field_id=highest,
        partition_keys=schema.partition_keys,
        primary_keys=schema.primary_keys,
        options=options,
        comment=comment,
        time_millis=int(time.time() * 1000),
    )
    # Paimon validates the schema an alter produces as it validates a new table (a column renamed
    # to a system field name, a retention option below its counterpart, ...).
    try:
        validate_table_schema(new_schema)
    except (OptionError, SchemaMismatchError) as exc:
        raise SchemaChangeError(str(exc)) from exc
    return new_schema


def _option_columns(options: dict[str, str]) -> set[str]:
    out: set[str] = set()
    for key in ("bucket-key", "sequence.field"):
        out.update(p.strip() for p in options.get(key, "").split(",") if p.strip())
    if options.get("rowkind.field"):
        out.add(options["rowkind.field"])
    for key in options:
        if key.startswith("fields.") and key.count(".") >= 2:
            out.add(key.split(".")[1])
    return out
