"""What the row-level operations accept: Paimon 2.0's rules for batch DELETE and UPDATE
(``PrimaryKeyTableUtils.validatePKUpsertDeletable``, Flink's ``applyRowLevelUpdate``,
paimon-spark's ``RowLevelOp``), checked before anything is read or written."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from lakestore.errors import NullKeyError, SchemaMismatchError, UnsupportedTableError
from lakestore.meta import options as opts
from lakestore.meta.schema import TableSchema
from lakestore.read.predicate import Predicate


def check_filter(schema: TableSchema, predicate: Predicate | None, *, table: str) -> None:
    """``SchemaMismatchError`` when the filter is not a predicate or names a column the table lacks."""
    if predicate is None:
        return
    if not isinstance(predicate, Predicate):
        raise SchemaMismatchError(f"{table}: the filter must be a lakestore predicate (lakestore.col(...)), got {predicate!r}")
    unknown = sorted(c for c in predicate.columns() if c not in schema.field_names)
    if unknown:
        raise SchemaMismatchError(f"{table}: filter names unknown columns {unknown} (columns: {schema.field_names})")


def check_vectors_writable(schema: TableSchema, *, table: str) -> None:
    """An append table with deletion vectors: refused for writes (lakestore appends and
    compactions would not keep its vectors), but a DELETE writes vectors only. Every other reason
    to refuse writing it still holds."""
    schema.require_supported("read", table=table)
    found = opts.unsupported(schema.options, primary_keys=schema.primary_keys, partition_keys=schema.partition_keys)
    rest = tuple(b for b in found.blocks_writes if b[0] != "deletion-vectors.enabled")
    opts.require_supported(opts.Unsupported(rest, found.blocks_reads), operation="delete rows of", table=table)


def check_row_kinds_kept(schema: TableSchema, what: str, *, table: str) -> None:
    """Refuse tables that would not keep the rows' kinds: ``rowkind.field`` takes each row's kind
    from a column (a DELETE would write the stored kind back), ``ignore-delete`` drops -D rows."""
    options = schema.core_options()
    if options.rowkind_field is not None:
        raise UnsupportedTableError(
            f"cannot {what} rows of {table}: rowkind.field={options.rowkind_field} takes each row's kind from that column",
            options=("rowkind.field",),
        )
    if what == "delete" and options.ignore_delete:
        names = tuple(k for k in ("ignore-delete", "partial-update.ignore-delete", "first-row.ignore-delete") if k in schema.options)
        raise UnsupportedTableError(f"cannot delete rows of {table}: {', '.join(names)} drops the -D rows a delete writes", options=names)


# The merge engines of the primary-key tables Paimon's UPDATE and MERGE INTO take (paimon-spark's
# RowLevelOp): a changed row replaces the key's row (deduplicate) or its columns (partial-update).
ROW_LEVEL_ENGINES = ("deduplicate", "partial-update")


def check_deletable(schema: TableSchema, *, table: str) -> None:
    """Paimon's ``validatePKUpsertDeletable``: -D rows remove a key under merge-engine
    deduplicate, partial-update with ``partial-update.remove-record-on-delete`` or
    ``partial-update.remove-record-on-sequence-group``, aggregation with
    ``aggregation.remove-record-on-delete``; never under first-row."""
    options = schema.core_options()
    engine = options.merge_engine
    if engine == "deduplicate":
        return
    if engine == "partial-update":
        if options.get("partial-update.remove-record-on-delete") or options.get("partial-update.remove-record-on-sequence-group"):
            return
        raise UnsupportedTableError(
            f"cannot delete rows of {table}: merge-engine partial-update deletes only with partial-update.remove-record-on-delete"
            " (or partial-update.remove-record-on-sequence-group) set, as Paimon's batch DELETE",
            options=("merge-engine", "partial-update.remove-record-on-delete"),
        )
    if engine == "aggregation":
        if options.get("aggregation.remove-record-on-delete"):
            return
        raise UnsupportedTableError(
            f"cannot delete rows of {table}: merge-engine aggregation deletes only with aggregation.remove-record-on-delete=true,"
            " as Paimon's batch DELETE",
            options=("merge-engine", "aggregation.remove-record-on-delete"),
        )
    raise UnsupportedTableError(
        f"cannot delete rows of {table}: merge-engine {engine} keeps the first row of a key", options=("merge-engine",)
    )


def check_updatable(schema: TableSchema, *, table: str) -> None:
    """Paimon's UPDATE: tables with a primary key and merge-engine deduplicate or partial-update;
    append tables with deletion vectors (paimon-spark marks the old rows deleted and appends the
    new ones; with row tracking it keeps their row ids, which lakestore does not)."""
    options = schema.core_options()
    if not schema.primary_keys:
        if not options.deletion_vectors:
            raise UnsupportedTableError(
                f"cannot update rows of {table}: an append table without deletion-vectors.enabled (Paimon rewrites such"
                " tables' files for UPDATE; lakestore does not)",
                options=("deletion-vectors.enabled",),
            )
        if options.row_tracking:
            raise UnsupportedTableError(
                f"cannot update rows of {table}: row-tracking.enabled (Paimon's UPDATE keeps the rows' ids; lakestore's would not)",
                options=("row-tracking.enabled",),
            )
        return
    engine = options.merge_engine
    if engine not in ROW_LEVEL_ENGINES:
        raise UnsupportedTableError(
            f"cannot update rows of {table}: merge-engine {engine} (Paimon updates deduplicate and partial-update tables only)",
            options=("merge-engine",),
        )
    check_row_kinds_kept(schema, "update", table=table)


def set_columns(schema: TableSchema, assignments: Mapping[str, Any], rows: pa.Table, *, table: str) -> pa.Table:
    """``rows`` with the assigned columns replaced by the literal values, cast to each column's type."""
    out = rows
    for name, value in assignments.items():
        column = pa.repeat(literal(schema, name, value, table=table), rows.num_rows)
        out = out.set_column(out.schema.get_field_index(name), out.schema.field(name), column)
    return out


def literal(schema: TableSchema, name: str, value: Any, *, table: str) -> pa.Scalar:
    """``value`` as a scalar of column ``name``'s type (``SchemaMismatchError`` if it is not one)."""
    field = schema.field(name)
    try:
        scalar = pa.scalar(value, type=field.type.to_arrow())
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError, OverflowError) as exc:
        raise SchemaMismatchError(f"{table}: set[{name!r}] = {value!r} is not a value of {field.type}: {exc}") from exc
    if isinstance(value, float) and pa.types.is_integer(scalar.type) and scalar.as_py() != value:
        raise SchemaMismatchError(f"{table}: set[{name!r}] = {value!r} is not a value of {field.type} (it would be truncated)")
    if not scalar.is_valid and not field.type.nullable:
        raise NullKeyError(f"{table}: set[{name!r}] = None, but column {name!r} is NOT NULL")
    return scalar


def check_assignments(schema: TableSchema, assignments: Mapping[str, Any], *, table: str) -> None:
    """Known, non-key columns only, each set to a literal of the column's type (checked before
    any read). Values are literals: Arrow expressions would need pyarrow's dataset engine, which
    loads pandas."""
    if not isinstance(assignments, Mapping) or not assignments:
        raise SchemaMismatchError(f"{table}: update needs set={{column: value, ...}}, got {assignments!r}")
    unknown = sorted(c for c in assignments if c not in schema.field_names)
    if unknown:
        raise SchemaMismatchError(f"{table}: set names unknown columns {unknown} (columns: {schema.field_names})")
    keys = sorted(c for c in assignments if c in schema.primary_keys)
    if keys:
        raise SchemaMismatchError(f"{table}: cannot update primary-key columns {keys} (Paimon's UPDATE refuses them too)")
    for name, value in assignments.items():
        literal(schema, name, value, table=table)


def fill_missing_columns(schema: TableSchema, data: pa.Table, *, table: str) -> pa.Table:
    """A write of some columns only (the primary key among them): under merge-engine
    partial-update the others are written as nulls, which leave the stored values unchanged (as
    a Paimon ``INSERT INTO t (k, a) ...`` does); other engines need every column."""
    missing = [n for n in schema.field_names if n not in data.column_names]
    if not missing:
        return data
    keys = [k for k in schema.primary_keys if k not in data.column_names]
    if keys:
        raise SchemaMismatchError(f"{table}: the rows lack primary-key columns {keys}")
    if schema.core_options().merge_engine != "partial-update":
        raise SchemaMismatchError(
            f"{table}: the rows lack columns {missing}; writes of some columns need merge-engine partial-update"
            f" (this table merges with {schema.core_options().merge_engine})"
        )
    not_null = [n for n in missing if not schema.field(n).type.nullable]
    if not_null:
        raise NullKeyError(f"{table}: the rows lack NOT NULL columns {not_null}")
    extra = [n for n in data.column_names if n not in schema.field_names]
    if extra:
        raise SchemaMismatchError(f"{table}: the rows have unknown columns {extra} (columns: {schema.field_names})")
    arrow = schema.arrow_schema()
    columns = [data.column(n) if n in data.column_names else pa.nulls(data.num_rows, arrow.field(n).type) for n in schema.field_names]
    return pa.Table.from_arrays(columns, names=schema.field_names)
