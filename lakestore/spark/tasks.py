"""What the ``paimon`` source runs on Spark executors (a write task, a read task over a group of
splits, an instrumentation hook) and what the driver does with the write tasks' messages: one
commit, or an abort, through ``lakestore.commit.protocol``.

A write task writes its batches with ``Table.new_write`` and returns its serialized
``CommitMessage``s; the driver commits them all as one ``CommitId`` (``commit_tasks``: files are
deleted only if the commit provably did not land) or aborts them (``abort_tasks``: Spark aborts
in another process, after a failed commit too, so the files are deleted only if the snapshots
show the commit did not land).
"""

from __future__ import annotations

import heapq
import importlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import WriterCommitMessage

from lakestore import errors
from lakestore.commit.commit import Overwrite
from lakestore.commit.protocol import CommitId, abort_unless_landed, commit_kind, commit_messages
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.read.predicate import Predicate
from lakestore.read.scan import Split
from lakestore.spark.options import BUCKET_COLUMN, ROW_KIND_COLUMN
from lakestore.spark.types import spark_arrow_schema, to_spark_arrow
from lakestore.table import Table
from lakestore.write.table_write import TableWrite

_BATCH_ROWS = 65536

# An instrumentation point of Spark writes: ``"<module>:<function>"`` in the Python workers'
# environment names a function called as ``function(point, files)`` at each point a write passes
# ("after-write" in a task, with the files it wrote; "after-compact" in a compaction task;
# "after-commit" on the driver). The project's tests crash a task there (tests/spark/faults.py).
TASK_HOOK_ENV = "LAKESTORE_SPARK_TASK_HOOK"


def task_hook(point: str, files: Sequence[str] = ()) -> None:
    """Call the ``TASK_HOOK_ENV`` function, if the environment names one, with ``point`` and ``files``.

    Raises:
        OptionError: the variable does not name ``"<module>:<function>"``.
    """
    spec = os.environ.get(TASK_HOOK_ENV)
    if not spec:
        return
    module, _, name = spec.partition(":")
    if not module or not name:
        raise errors.OptionError(f"{TASK_HOOK_ENV} must be '<module>:<function>', got {spec!r}")
    getattr(importlib.import_module(module), name)(point, files)


# -- read -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReadTask:
    """One input partition of a batch read: planned splits, read with the scan's schema (its
    snapshot's), columns, filter and limit."""

    schema: TableSchema
    splits: tuple[Split, ...]
    columns: tuple[str, ...]
    filter: Predicate | None = None
    limit: int | None = None


def read_task(table: Table, task: ReadTask) -> Iterator[pa.RecordBatch]:
    """The rows of ``task`` as Spark's Arrow batches, read piece by piece (bounded memory)."""
    reader = table.split_reader(task.schema)
    target = spark_arrow_schema(task.schema, task.columns)
    for data in reader.iter_tables(task.splits, task.columns, task.filter, limit=task.limit, workers=1):
        yield from to_spark_arrow(data, target).to_batches(max_chunksize=_BATCH_ROWS)


def group_splits(splits: Sequence[Split], groups: int) -> list[list[Split]]:
    """Longest-processing-time packing of splits into ``groups`` lists of similar row counts."""
    groups = max(1, min(groups, len(splits)))
    heap = [(0, i) for i in range(groups)]
    out: list[list[Split]] = [[] for _ in range(groups)]
    for split in sorted(splits, key=lambda s: s.row_count, reverse=True):
        load, i = heapq.heappop(heap)
        out[i].append(split)
        heapq.heappush(heap, (load + split.row_count, i))
    return [g for g in out if g]


# -- write ----------------------------------------------------------------------------------------
@dataclass
class PaimonCommitMessage(WriterCommitMessage):
    """What one write task sends the driver: its serialized lakestore CommitMessages."""

    messages: list[bytes]


def write_batch(writer: TableWrite, batch: pa.RecordBatch) -> None:
    """Write one batch: without ``BUCKET_COLUMN``, and with ``ROW_KIND_COLUMN`` each run of rows
    of one kind written with that ``row_kind`` (rows keep their order), the column dropped."""
    index = batch.schema.get_field_index(BUCKET_COLUMN)
    if index >= 0:
        batch = batch.remove_column(index)
    index = batch.schema.get_field_index(ROW_KIND_COLUMN)
    if index < 0:
        writer.write_arrow(batch)
        return
    kinds = batch.column(index).to_numpy(zero_copy_only=False)
    batch = batch.remove_column(index)
    starts = [0, *(np.flatnonzero(np.diff(kinds)) + 1).tolist()]
    for start, end in zip(starts, [*starts[1:], len(kinds)], strict=True):
        writer.write_arrow(batch.slice(start, end - start), row_kind=int(kinds[start]))


def write_task(table: Table, batches: Iterator[pa.RecordBatch], commit_user: str, overwrite: Overwrite) -> PaimonCommitMessage:
    """One task's write: its batches through a TableWrite of ``commit_user`` (the committing
    ``CommitId``'s user, ``write_batch``), its files deleted if it fails."""
    writer = None
    try:
        for batch in batches:
            if not batch.num_rows:
                continue
            if writer is None:  # lazily: an empty task need not index the table's files
                writer = table.new_write(commit_user=commit_user, overwrite=overwrite)
            write_batch(writer, batch)
        messages = writer.prepare_commit() if writer is not None else []
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if writer is not None:
        writer.close()
    task_hook("after-write", [f.file_name for m in messages for f in (*m.new_files, *m.changelog_files)])
    return PaimonCommitMessage([m.to_bytes() for m in messages if not m.is_empty])


def task_messages(messages: Sequence[WriterCommitMessage | None]) -> list[list[CommitMessage]]:
    """The CommitMessages of each write task that returned any (failed tasks return None)."""
    return [[CommitMessage.from_bytes(b) for b in m.messages] for m in messages if isinstance(m, PaimonCommitMessage)]


def needs_single_writer(table: Table) -> bool:
    """Whether each bucket must be written by one task: fixed-bucket primary-key tables (a bucket's
    sequence numbers come from one writer) and dynamic-bucket tables (a partition's keys are
    assigned buckets by one writer, or two tasks could put one key in two buckets)."""
    buckets = table.schema.core_options().bucket
    return bool(table.primary_keys) or buckets > 0


def check_single_writer(table: Table, per_task: Sequence[Sequence[CommitMessage]]) -> None:
    """Refuse a primary-key commit whose tasks wrote the same bucket.

    Raises:
        OptionError: two tasks wrote one bucket.
    """
    if not table.primary_keys:
        return
    owner: dict[tuple[bytes, int], int] = {}
    for task, messages in enumerate(per_task):
        for m in messages:
            if m.new_files and owner.setdefault((m.partition, m.bucket), task) != task:
                raise errors.OptionError(
                    f"two Spark tasks wrote bucket {m.bucket} of primary-key table {table.identifier}: distribute the rows by"
                    " bucket first (lakestore.spark.distribute(df, table), or lakestore.spark.write_dataframe)"
                )


def commit_tasks(
    table: Table,
    messages: Sequence[WriterCommitMessage | None],
    commit_id: CommitId,
    *,
    overwrite: Overwrite,
    operation: str | None = None,
) -> Snapshot | None:
    """The driver's one commit of the write tasks' messages as ``commit_id`` (an overwrite
    commits even without rows), its snapshots recording ``operation`` (``merge_into``'s MERGE).
    A refused commit (two tasks wrote one primary-key bucket) deletes the tasks' files; a failed
    one deletes them only if it provably did not land; a ``commit_id`` that landed before
    commits nothing and deletes them (no snapshot names them).

    Raises:
        OptionError: two tasks wrote one bucket of a primary-key table.
        CommitConflictError: the commit conflicts with one that landed first.
        CommitRetriesExhaustedError: concurrent commits kept winning the race.
    """
    per_task = task_messages(messages)
    return commit_messages(
        table,
        [m for task in per_task for m in task],
        commit_id,
        check=lambda: check_single_writer(table, per_task),
        overwrite=overwrite,
        commit_empty=overwrite is not None and overwrite is not False,
        operation=operation,
    )


def abort_tasks(
    table: Table, messages: Sequence[WriterCommitMessage | None], commit_id: CommitId, *, overwrite: Overwrite, after_id: int | None
) -> None:
    """Spark's abort of a write job: delete the tasks' files unless ``commit_id`` landed (Spark
    aborts a job whose commit step failed even when the commit landed first)."""
    flat = [m for task in task_messages(messages) for m in task]
    abort_unless_landed(table, commit_id, commit_kind(overwrite), flat, after_id=after_id)
