"""``delete_rows``, ``update_rows`` and ``upsert_rows``: Paimon 2.0's batch DELETE and UPDATE
(paimon-spark's ``DeleteFromPaimonTableCommand`` / ``UpdatePaimonTableCommand``, Paimon's Flink
``SupportsRowLevelOperationFlinkTableSink``), each one commit of the table's own write.

- DELETE without a filter empties the table, and one whose filter names only partition columns
  drops the partitions it selects (an OVERWRITE commit, Spark's ``TruncatePaimonTableWithFilter``;
  unless ``delete.force-produce-changelog``, which makes it a row-level delete).
- Otherwise, on a primary-key table, DELETE reads the rows the filter selects (merged, every
  column) and writes them back with row kind -D; UPDATE writes them with the new values and row
  kind +U. They are ordinary writes: each bucket's sequence numbers continue from its largest,
  so they supersede what they read.
- On an append table with ``deletion-vectors.enabled``, DELETE marks the rows' positions in
  deletion vectors (``lakestore.dml.append_vectors``); UPDATE marks them too and appends the
  updated rows as new data files, in the same commit. Other append tables: refused (Paimon's
  Spark DELETE rewrites their files, which lakestore does not).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa

from lakestore.commit.commit import Overwrite
from lakestore.commit.protocol import CommitId, write_and_commit
from lakestore.dml.append_vectors import change_with_vectors, committer_for, delete_with_vectors
from lakestore.dml.checks import (
    check_assignments,
    check_deletable,
    check_filter,
    check_row_kinds_kept,
    check_updatable,
    fill_missing_columns,
    set_columns,
)
from lakestore.dml.target import RowChangeTable, matching_rows
from lakestore.errors import UnsupportedTableError
from lakestore.format.arrow_ops import from_pylist
from lakestore.format.kv import DELETE, UPDATE_AFTER
from lakestore.meta.file_info import live_files
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.read.predicate import Predicate, apply_filter
from lakestore.write.table_write import InputData


def delete_rows(table: RowChangeTable, predicate: Predicate | None, *, commit_user: str | None = None) -> Snapshot | None:
    """Delete the rows ``predicate`` selects (None: every row); returns the new snapshot, None
    when no row matched."""
    schema, name = table.schema, table.store.path
    check_filter(schema, predicate, table=name)
    schema.require_supported("read", table=name)
    user = commit_user or str(uuid.uuid4())
    if _is_truncation(schema, predicate):
        return _truncate(table, predicate, user)
    if not schema.primary_keys:
        if schema.core_options().deletion_vectors:
            return delete_with_vectors(table, predicate, commit_user=user)
        raise UnsupportedTableError(
            f"cannot delete rows of {name}: an append table without deletion-vectors.enabled (Paimon's Spark DELETE rewrites"
            " the files holding them, which lakestore does not); a filter on partition columns only drops whole partitions",
            options=("deletion-vectors.enabled",),
        )
    schema.require_supported("write", table=name)
    check_deletable(schema, table=name)
    check_row_kinds_kept(schema, "delete", table=name)
    snapshot = table.store.latest_snapshot()
    rows = matching_rows(table, snapshot, predicate)
    return _write(table, rows, DELETE, user, operation="DELETE")


def update_rows(
    table: RowChangeTable, assignments: Mapping[str, Any], predicate: Predicate | None, *, commit_user: str | None = None
) -> Snapshot | None:
    """Set the columns of ``assignments`` to their values in the rows ``predicate`` selects
    (None: every row); returns the new snapshot, None when no row matched."""
    schema, name = table.schema, table.store.path
    check_updatable(schema, table=name)
    check_assignments(schema, assignments, table=name)
    check_filter(schema, predicate, table=name)
    user = commit_user or str(uuid.uuid4())
    if not schema.primary_keys:  # deletion vectors (check_updatable)
        return change_with_vectors(
            table, predicate, commit_user=user, operation="UPDATE", rewrite=lambda rows: set_columns(schema, assignments, rows, table=name)
        )
    schema.require_supported("write", table=name)
    rows = matching_rows(table, table.store.latest_snapshot(), predicate)
    updated = set_columns(schema, assignments, rows, table=name)
    return _write(table, updated, UPDATE_AFTER, user, operation="UPDATE")


def upsert_rows(table: RowChangeTable, data: InputData, *, commit_user: str | None = None) -> Snapshot | None:
    """Insert or replace rows by primary key (merged by the table's merge engine). Under
    merge-engine partial-update ``data`` may carry some columns only (the primary key among
    them): the others are written as nulls, which leave the stored values as they are."""
    schema, name = table.schema, table.store.path
    if not schema.primary_keys:
        raise UnsupportedTableError(f"cannot upsert into {name}: it has no primary key (append rows with write_arrow)")
    # streamed batch by batch; a bad batch aborts the write, which deletes what it wrote
    filled = (fill_missing_columns(schema, b, table=name) for b in _tables(data))
    return _write(table, filled, None, commit_user or str(uuid.uuid4()))


def _tables(data: InputData) -> Iterator[pa.Table]:
    """The input as Arrow tables (anything exporting ``__arrow_c_stream__`` is read as a stream)."""
    if isinstance(data, pa.Table):
        yield data
        return
    if isinstance(data, pa.RecordBatch):
        yield pa.Table.from_batches([data])
        return
    if not isinstance(data, pa.RecordBatchReader) and hasattr(data, "__arrow_c_stream__"):
        data = pa.RecordBatchReader.from_stream(data)
    for batch in data:
        yield pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch


def _write(
    table: RowChangeTable, rows: pa.Table | Iterable[pa.Table], row_kind: int | None, user: str, *, operation: str | None = None
) -> Snapshot | None:
    """One commit of ``rows`` through the table's write (its snapshots record ``operation``, as
    paimon-spark's DELETE and UPDATE commits do), by the one write/commit protocol."""
    return write_and_commit(table, lambda write: write.write_arrow(rows, row_kind=row_kind), CommitId(user), operation=operation)


def _is_truncation(schema: TableSchema, predicate: Predicate | None) -> bool:
    """Spark's metadata-only DELETE (``OptimizeMetadataOnlyDeleteFromPaimonTable``): no filter,
    or one on partition columns only (unless ``delete.force-produce-changelog``)."""
    if predicate is None:
        return True
    keys = set(schema.partition_keys)
    return bool(keys) and predicate.columns() <= keys and not schema.core_options().get("delete.force-produce-changelog")


def _truncate(table: RowChangeTable, predicate: Predicate | None, user: str) -> Snapshot | None:
    """Drop the table's rows (``predicate`` None) or its partitions ``predicate`` selects, in one
    OVERWRITE commit; None when no partition matched."""
    schema = table.schema
    snapshot = table.store.latest_snapshot()
    overwrite: Overwrite
    if predicate is None:
        if snapshot is None:
            return None
        overwrite = True
    else:
        partitions = {tuple(f.partition[k] for k in schema.partition_keys) for f in live_files(table.store.manifests(), schema, snapshot)}
        if not partitions:
            return None
        arrow = schema.arrow_schema()
        ordered = sorted(partitions, key=repr)
        values = pa.table({k: from_pylist([p[i] for p in ordered], arrow.field(k).type) for i, k in enumerate(schema.partition_keys)})
        selected = apply_filter(values, predicate)
        if not selected.num_rows:
            return None
        overwrite = selected.to_pylist()
    snapshots = committer_for(table, user).commit([], overwrite=overwrite, operation="TRUNCATE")
    return snapshots[-1] if snapshots else None
