"""The writes behind ``PaimonIOManager.handle_output``: Arrow data through ``Table.write_arrow`` /
``Table.upsert``, PySpark DataFrames through ``lakestore.spark.write_dataframe`` (distributed:
Spark tasks write the files, the driver commits once).

``overwrite`` mode replaces exactly the partitions the run materializes: one partition, one
``Table.write_arrow(overwrite={...})``; several (a single-run backfill), one write whose commit
overwrites them all at once (``new_write(overwrite=True)`` + ``commit_written(overwrite=[...])``,
every row checked to lie in one of them first); an unpartitioned asset replaces the whole table,
as both dagster-deltalake and dagster-iceberg do. Spark writes several partitions as one
OVERWRITE commit per partition (``write_dataframe`` overwrites one partition per job).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

import pyarrow as pa

import lakestore
from lakestore import Predicate, col
from lakestore.commit.protocol import CommitId, commit_written, write_messages
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER
from resources.paimon.errors import PartitionMappingError, TableDefinitionError
from resources.paimon.frames import ArrowData

WriteMode = Literal["overwrite", "append", "upsert"]
WRITE_MODES: tuple[str, ...] = ("overwrite", "append", "upsert")


def _spec_predicate(specs: Sequence[dict[str, Any]]) -> Predicate:
    out: Predicate | None = None
    for spec in specs:
        term: Predicate | None = None
        for column, value in spec.items():
            eq = col(column) == value
            term = eq if term is None else term & eq
        assert term is not None
        out = term if out is None else out | term
    assert out is not None
    return out


def _batches(data: ArrowData) -> Iterator[pa.RecordBatch]:
    yield from data.to_batches() if isinstance(data, pa.Table) else data


def _overwrite_many(table: lakestore.Table, data: ArrowData, specs: Sequence[dict[str, Any]], user: str) -> None:
    inside = _spec_predicate(specs).to_arrow()

    def fill(write: lakestore.TableWrite) -> None:
        for batch in _batches(data):
            rows = pa.Table.from_batches([batch])
            outside = rows.filter(~inside).num_rows
            if outside:
                raise PartitionMappingError(f"table {table.identifier}: {outside} rows outside the materialized partitions {list(specs)}")
            write.write_arrow(rows)

    messages = write_messages(table, fill, user, overwrite=True)
    commit_written(table, messages, CommitId(user, BATCH_COMMIT_IDENTIFIER), overwrite=list(specs), commit_empty=True)


def write_arrow(table: lakestore.Table, data: ArrowData, mode: str, specs: Sequence[dict[str, Any]] | None, user: str) -> None:
    """Write Arrow ``data`` in ``mode``; ``specs``: the partitions materialized (None: the asset
    is unpartitioned).

    Raises:
        TableDefinitionError: ``upsert`` into a table without a primary key.
        PartitionMappingError: rows outside the materialized partitions (several of them).
        SchemaMismatchError, PartitionValueError, CommitConflictError: from the write.
    """
    if mode == "upsert":
        _require_primary_key(table)
        table.upsert(data, commit_user=user)
    elif mode == "append":
        table.write_arrow(data, commit_user=user)
    elif specs is None:
        table.write_arrow(data, overwrite=True, commit_user=user)
    elif len(specs) == 1:
        table.write_arrow(data, overwrite=specs[0], commit_user=user)
    else:
        _overwrite_many(table, data, specs, user)


def write_spark(table: lakestore.Table, df: Any, mode: str, specs: Sequence[dict[str, Any]] | None, user: str) -> None:
    """Write a PySpark DataFrame in ``mode`` through ``lakestore.spark.write_dataframe`` (an
    upsert is an append: a primary-key table merges rows by key).

    Raises:
        TableDefinitionError: ``upsert`` into a table without a primary key.
        PartitionMappingError: rows outside the materialized partitions (several of them).
        SchemaMismatchError, PartitionValueError, CommitConflictError: from the write.
    """
    from pyspark.sql import functions as F  # noqa: PLC0415 - optional, with the DataFrame

    from lakestore.spark import write_dataframe  # noqa: PLC0415 - imports pyspark

    if mode == "upsert":
        _require_primary_key(table)
    if mode in ("upsert", "append"):
        write_dataframe(df, table, commit_user=user)
    elif specs is None:
        write_dataframe(df, table, overwrite=True, commit_user=user)
    elif len(specs) == 1:
        write_dataframe(df, table, overwrite=specs[0], commit_user=user)
    else:
        conditions = [_spark_condition(F, spec) for spec in specs]
        anywhere = conditions[0]
        for condition in conditions[1:]:
            anywhere = anywhere | condition
        outside = df.filter(~anywhere).count()
        if outside:
            raise PartitionMappingError(f"table {table.identifier}: {outside} rows outside the materialized partitions {list(specs)}")
        for spec, condition in zip(specs, conditions, strict=True):
            write_dataframe(df.filter(condition), table, overwrite=spec, commit_user=user)


def _spark_condition(functions: Any, spec: dict[str, Any]) -> Any:
    """The Spark column expression of one partition spec (its columns equal its values)."""
    terms = [functions.col(column) == functions.lit(value) for column, value in spec.items()]
    condition = terms[0]
    for term in terms[1:]:
        condition = condition & term
    return condition


def _require_primary_key(table: lakestore.Table) -> None:
    if not table.primary_keys:
        raise TableDefinitionError(f"table {table.identifier} has no primary key: write_mode 'upsert' needs primary_keys")
