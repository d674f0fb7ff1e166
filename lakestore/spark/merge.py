"""``merge_into``: the DataFrame form of Paimon's ``MERGE INTO t USING df ON <primary key>``.
PySpark's Python data sources take no SQL ``DELETE`` / ``UPDATE`` / ``MERGE``, so the merge is
built from DataFrame joins and written through the ``paimon`` source, in one commit.

- ``matched="update", not_matched="insert"``: an upsert, the DataFrame written as it is (+I
  rows, as ``Table.upsert`` writes them).
- ``matched="update"`` alone: the DataFrame's rows whose key the table holds (a semi-join with
  the table's keys), written as +U rows, as Paimon's MERGE INTO and ``Table.update`` write them.
- ``not_matched="insert"`` alone: the DataFrame's rows whose key the table lacks (an anti-join),
  written as +I rows.
- ``matched="delete"``: the table's rows whose key the DataFrame holds, read whole
  (``read_dataframe``, a semi-join) and written back as -D rows, as Paimon's batch DELETE writes
  them; with ``not_matched="insert"`` the DataFrame's other rows go into the same write as +I.

Each row's kind travels in ``ROW_KIND_COLUMN``, which the write task writes the row with and
drops; ``distribute`` gives each bucket one task. The commit is one APPEND snapshot (as Paimon's
Spark MERGE INTO commits) whose ``operation`` is Paimon's ``MERGE``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Literal

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lakestore import errors
from lakestore.commit.protocol import CommitId, find_landed
from lakestore.dml.checks import ROW_LEVEL_ENGINES, check_deletable, check_row_kinds_kept, check_updatable, fill_missing_columns
from lakestore.format.kv import DELETE, INSERT, UPDATE_AFTER
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from lakestore.spark import compat
from lakestore.spark.dataframe import distribute, executor_environments, read_dataframe
from lakestore.spark.options import (
    COMMIT_IDENTIFIER,
    COMMIT_USER,
    OPERATION_OPTION,
    ROW_KIND_COLUMN,
    SOURCE_NAME,
    table_options,
    typed_errors,
)
from lakestore.spark.source import ensure_registered
from lakestore.spark.types import spark_type
from lakestore.table import Table
from lakestore.write.input import conform

# The snapshot's ``operation`` (Paimon 2.0's ``Snapshot.Operation.MERGE``); its kind is APPEND.
MERGE = "MERGE"

Matched = Literal["update", "delete"] | None
NotMatched = Literal["insert"] | None


def merge_into(
    df: DataFrame,
    table: Table,
    *,
    matched: Matched = "update",
    not_matched: NotMatched = "insert",
    on: Sequence[str] | None = None,
    commit_user: str | None = None,
    commit_identifier: int | None = None,
) -> Snapshot | None:
    """Merge ``df`` into the primary-key ``table`` on the primary key, in one commit: Paimon's
    ``MERGE INTO table USING df ON <key> WHEN MATCHED THEN UPDATE SET * | DELETE WHEN NOT
    MATCHED THEN INSERT *``.

    ``matched="update"`` replaces the matched rows with ``df``'s (under merge-engine
    partial-update ``df`` may carry some columns, the key among them: the others are written as
    nulls, which leave the stored values as they are); ``matched="delete"`` writes the matched
    rows, read whole from the table, as -D rows; ``matched=None`` leaves them. ``not_matched=
    "insert"`` inserts ``df``'s rows whose key the table lacks. Update and insert together is an
    upsert (``df`` written once, as ``Table.upsert``). A rerun with the same ``commit_user`` and
    ``commit_identifier`` finds the landed commit and writes nothing. Everything is checked
    before any Spark job runs; a failed job commits nothing.

    Args:
        df: the source rows; columns matched by name and cast to the table's types (Spark casts
            the inserted rows of a delete-and-insert merge, which share one write with the -D rows).
        table: a primary-key table with merge-engine deduplicate or partial-update.
        matched: ``"update"``, ``"delete"`` or None: what happens to the table's rows whose key
            ``df`` holds.
        not_matched: ``"insert"`` or None: what happens to ``df``'s rows whose key the table lacks.
        on: the join columns: the table's primary key, in any order (default: the primary key).
        commit_user: the commit user (default: a fresh UUID).
        commit_identifier: with ``commit_user``, makes the merge idempotent.

    Returns:
        The APPEND snapshot of the commit (its ``operation`` is ``MERGE``), or None when nothing
        was written (no row matched).

    Raises:
        UnsupportedTableError: an append table (use ``table.delete`` / ``table.update`` on append
            tables with deletion vectors), a merge engine Paimon's MERGE INTO refuses, a delete the
            table cannot take (``Table.delete``'s rules), ``rowkind.field``.
        OptionError: ``matched`` / ``not_matched`` values, neither given, ``on`` other than the
            primary key, ``commit_identifier`` without ``commit_user``.
        SchemaMismatchError: ``df`` lacks a key column, has unknown, duplicate or mistyped columns,
            or lacks columns outside partial-update (``NullKeyError``: NOT NULL columns missing,
            or null keys found by the tasks).
        CommitConflictError: a concurrent commit conflicts with this one.
    """
    name = table.identifier
    schema = table.schema
    _check_actions(matched, not_matched)
    _check_table(schema, matched, name)
    keys = _check_on(schema, on, name)
    missing = _check_columns(df, schema, name, written=matched != "delete" or not_matched is not None)
    if commit_identifier is not None and commit_user is None:
        raise errors.OptionError("merge_into: commit_identifier needs commit_user (a fresh user never finds its landed commit)")
    try:
        commit_id = CommitId(commit_user or str(uuid.uuid4()), BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier)
    except ValueError as exc:
        raise errors.OptionError(f"merge_into: {exc}") from exc
    if commit_id.identifier != BATCH_COMMIT_IDENTIFIER:
        landed = find_landed(table, commit_id, "APPEND", after_id=None)
        if landed is not None:  # a rerun: its commit landed, no Spark job runs
            return landed
    # the table's reference first: a credential Spark's processes lack is refused before any job
    options = table_options(table, environments=executor_environments(df.sparkSession))
    options.update({COMMIT_USER: commit_id.user, OPERATION_OPTION: MERGE})
    before = table.store.snapshot_manager.latest_id()
    ensure_registered(df.sparkSession)
    rows = _merged_rows(df, table, keys, missing, matched, not_matched, at=before)
    if commit_id.identifier != BATCH_COMMIT_IDENTIFIER:
        options[COMMIT_IDENTIFIER] = str(commit_id.identifier)
    with typed_errors():
        distribute(rows, table).write.format(SOURCE_NAME).mode("append").options(**options).save()
    return find_landed(table, commit_id, "APPEND", after_id=before)


# -- checks (before any Spark job) ------------------------------------------------------------
def _check_actions(matched: object, not_matched: object) -> None:
    if matched not in ("update", "delete", None):
        raise errors.OptionError(f"merge_into: matched must be 'update', 'delete' or None, got {matched!r}")
    if not_matched not in ("insert", None):
        raise errors.OptionError(f"merge_into: not_matched must be 'insert' or None, got {not_matched!r}")
    if matched is None and not_matched is None:
        raise errors.OptionError("merge_into: give matched= or not_matched= (with neither there is nothing to merge)")


def _check_table(schema: TableSchema, matched: Matched, name: str) -> None:
    """Primary-key tables whose merge engine Paimon's MERGE INTO takes, and for an update or a
    delete the rules of ``Table.update`` / ``Table.delete`` (``lakestore.dml.checks``)."""
    if not schema.primary_keys:
        raise errors.UnsupportedTableError(
            f"cannot merge into {name}: merge_into joins on the primary key and {name} has none; on append tables with"
            " deletion-vectors.enabled use table.delete / table.update"
        )
    schema.require_supported("read", table=name)
    schema.require_supported("write", table=name)
    if matched == "update":
        check_updatable(schema, table=name)
    elif matched == "delete":
        check_deletable(schema, table=name)
        check_row_kinds_kept(schema, "delete", table=name)
    engine = schema.core_options().merge_engine
    if engine not in ROW_LEVEL_ENGINES:
        raise errors.UnsupportedTableError(
            f"cannot merge into {name}: merge-engine {engine} (Paimon's MERGE INTO takes deduplicate and partial-update tables)",
            options=("merge-engine",),
        )
    check_row_kinds_kept(schema, "merge", table=name)  # each row's kind is the merge's, not a column's


def _check_on(schema: TableSchema, on: Sequence[str] | None, name: str) -> list[str]:
    """The join columns: the primary key (``on`` may name it in any order)."""
    keys = list(schema.primary_keys)
    if on is None:
        return keys
    given = [on] if isinstance(on, str) else list(on)
    if sorted(given) != sorted(keys):
        raise errors.OptionError(f"merge_into joins {name} on its primary key {keys}, not on {given}")
    return keys


def _check_columns(df: DataFrame, schema: TableSchema, name: str, *, written: bool) -> list[str]:
    """Refuse a ``df`` without the key, with unknown, duplicate or uncastable columns, or (when
    its rows are written) lacking columns outside partial-update (``fill_missing_columns``, as
    ``Table.upsert``); returns the table's columns ``df`` lacks."""
    given = compat.to_arrow_schema(df.schema)
    duplicates = sorted({n for n in given.names if given.names.count(n) > 1})
    if duplicates:
        raise errors.SchemaMismatchError(f"{name}: the DataFrame has duplicate columns {duplicates}")
    unknown = [n for n in given.names if n not in schema.field_names]
    if unknown:
        raise errors.SchemaMismatchError(f"{name}: the DataFrame has unknown columns {unknown} (columns: {schema.field_names})")
    keys = [k for k in schema.primary_keys if k not in given.names]
    if keys:
        raise errors.SchemaMismatchError(f"{name}: the DataFrame lacks primary-key columns {keys} (merge_into joins on them)")
    missing = [n for n in schema.field_names if n not in given.names]
    if written:
        probe = fill_missing_columns(schema, given.empty_table(), table=name)
    else:  # a delete only: the key is all that is used
        arrow = schema.arrow_schema()
        probe = pa.schema([*given, *(arrow.field(n) for n in missing)]).empty_table()
    conform(probe, schema)  # types that cannot be cast
    return missing


# -- the merged rows ------------------------------------------------------------------------------
def _merged_rows(
    df: DataFrame, table: Table, keys: list[str], missing: list[str], matched: Matched, not_matched: NotMatched, *, at: int | None
) -> DataFrame:
    """What the one write writes: rows of ``df`` and of the table, each with its kind (in
    ``ROW_KIND_COLUMN``; none: +I, as ``Table.upsert``). Every read of the table reads snapshot
    ``at`` (the latest when the merge began), so the matched and the unmatched rows are decided
    on one version of the table however often Spark evaluates the joins."""
    schema = table.schema
    spark = df.sparkSession
    source = df
    for column in missing:  # partial-update: missing columns are nulls, which change nothing
        source = source.withColumn(column, F.lit(None).cast(spark_type(schema.field(column).type)))
    if matched == "update" and not_matched == "insert":
        return source
    table_keys = read_dataframe(spark, table, columns=keys, snapshot_id=at)
    if matched == "update":
        return _with_kind(source.join(table_keys, keys, "left_semi"), UPDATE_AFTER)
    if matched is None:
        return _with_kind(source.join(table_keys, keys, "left_anti"), INSERT)
    deleted = _with_kind(read_dataframe(spark, table, snapshot_id=at).join(df.select(*keys), keys, "left_semi"), DELETE)
    if not_matched is None:
        return deleted
    # One write of both: the inserted rows take the table's types, as the -D rows have them.
    inserted = source.join(table_keys, keys, "left_anti")
    inserted = inserted.select(*[F.col(f.name).cast(spark_type(f.type)).alias(f.name) for f in schema.fields])
    return deleted.unionByName(_with_kind(inserted, INSERT))


def _with_kind(rows: DataFrame, kind: int) -> DataFrame:
    return rows.withColumn(ROW_KIND_COLUMN, F.lit(kind).cast("tinyint"))
