"""What the ``paimon`` source runs in Spark's Python workers: the table each job opens once per
process (``job_table``), a write task, a read task over a group of splits, an instrumentation
hook, and what the driver does with the write tasks' messages: one commit, or an abort, through
``lakestore.commit.protocol``.

A write task is the protocol's write half (``write_messages``: its batches through
``Table.new_write``, its files deleted if it fails) and returns its serialized
``CommitMessage``s; the driver runs the commit half on all of them as one ``CommitId``
(``commit_tasks``: ``commit_written`` decides, once, whether the commit landed: files are
deleted only if it provably did not, and a rerun of a landed ``CommitId`` commits nothing and
deletes its own files). Spark aborts a job in another process, after failed tasks or after a
failed commit step (``abort_tasks``): a failed task hands Spark no message, so when every task
returned its messages the commit step was reached and decided already, and the abort keeps
every file; otherwise the commit provably never ran and the tasks' files are deleted.

The table: every Spark task and planning call runs in a Python worker process, which Spark
reuses for the next task. ``job_table`` opens a job's table once per process (a small LRU of
the last few tables, keyed by the job's id and the ``TableRef``'s JSON), so a job's tasks, its
planning and its commit share one ``Table`` per process, and a later job opens the table afresh
(a schema change between jobs is seen).
"""

from __future__ import annotations

import heapq
import importlib
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import WriterCommitMessage

from lakestore import errors
from lakestore.commit.commit import Overwrite
from lakestore.commit.protocol import CommitId, CommitOutcome, abort_written, commit_written, write_messages
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.schema import TableSchema
from lakestore.read.planner import Split
from lakestore.read.predicate import Predicate
from lakestore.spark.job import TableRef
from lakestore.spark.options import BUCKET_COLUMN, ROW_KIND_COLUMN
from lakestore.spark.types import spark_arrow_schema, to_spark_arrow
from lakestore.table import Table
from lakestore.write.table_write import TableWrite

_BATCH_ROWS = 65536

# An instrumentation point of Spark jobs: ``"<module>:<function>"`` in the Python workers'
# environment names a function called as ``function(point, files)`` at each point a job passes
# ("after-write" in a task, with the files it wrote; "after-compact" in a compaction task;
# "after-commit" on the driver; "open-table" where a process opens a job's table, with the
# table's location and the job's id). The project's tests crash a task there
# (tests/spark/faults.py) and count the opens.
TASK_HOOK_ENV = "LAKESTORE_SPARK_TASK_HOOK"
# How many (job, table) pairs a Python worker keeps open.
TABLE_CACHE_SIZE = 4


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


# -- the table of a job ---------------------------------------------------------------------------
_tables: OrderedDict[tuple[str, str], Table] = OrderedDict()
_tables_lock = threading.Lock()
_opened = 0


def new_job_id() -> str:
    """A fresh id for one planned read or write (the key of its tables in every process)."""
    return uuid.uuid4().hex


def job_table(ref: TableRef, job: str) -> Table:
    """The table ``ref`` names for job ``job``, opened once in this process (see the module
    docstring); the least recently used of ``TABLE_CACHE_SIZE`` tables is dropped.

    Raises:
        TableNotFoundError: no such table, or no such branch.
        OptionError: catalog options lakestore cannot use.
    """
    global _opened
    key = (job, ref.to_json())
    with _tables_lock:
        table = _tables.get(key)
        if table is not None:
            _tables.move_to_end(key)
            return table
        table = ref.open()
        _opened += 1
        _tables[key] = table
        while len(_tables) > TABLE_CACHE_SIZE:
            _tables.popitem(last=False)
    task_hook("open-table", [ref.table, job])
    return table


def tables_opened() -> int:
    """How many tables ``job_table`` opened in this process."""
    return _opened


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
    reader = table.store.split_reader(task.schema)
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


# Spark hands a Python writer Arrow batches of ``spark.sql.execution.arrow.maxRecordsPerBatch``
# rows (10,000 by default; ~65k seen); the table writer's per-batch work (one sort and take per
# batch, then a slice per bucket the batch touches) is paid per batch, so batches of a table
# spread over thousands of partition-buckets are first joined up to these bounds.
COALESCE_ROWS = 512 * 1024
COALESCE_BYTES = 64 * 1024 * 1024


def coalesce(batches: Iterator[pa.RecordBatch], *, rows: int = COALESCE_ROWS, nbytes: int = COALESCE_BYTES) -> Iterator[pa.RecordBatch]:
    """``batches`` joined, in order, into batches of at least ``rows`` rows or ``nbytes`` bytes
    (the last one smaller); empty batches are dropped. Holds at most one joined batch's worth."""
    pending: list[pa.RecordBatch] = []
    count = size = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        pending.append(batch)
        count += batch.num_rows
        size += batch.nbytes
        if count >= rows or size >= nbytes:
            yield _joined(pending)
            pending, count, size = [], 0, 0
    if pending:
        yield _joined(pending)


def _joined(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


def write_task(table: Table, batches: Iterator[pa.RecordBatch], commit_user: str, overwrite: Overwrite) -> PaimonCommitMessage:
    """One task's write: the protocol's write half (``write_messages``) over its batches (joined
    by ``coalesce``), as ``commit_user`` (the committing ``CommitId``'s user, ``write_batch``);
    its files are deleted if it fails."""
    rows = coalesce(batches)
    first = next(rows, None)
    if first is None:  # an empty task writes nothing and need not index the table's files
        task_hook("after-write", [])
        return PaimonCommitMessage([])

    def fill(writer: TableWrite) -> None:
        write_batch(writer, first)
        for batch in rows:
            write_batch(writer, batch)

    messages = write_messages(table, fill, commit_user, overwrite=overwrite)
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
) -> CommitOutcome:
    """The driver's one commit of the write tasks' messages as ``commit_id``: the protocol's
    commit half (``commit_written``; an overwrite commits even without rows), its snapshots
    recording ``operation`` (``merge_into``'s MERGE). A refused commit (two tasks wrote one
    primary-key bucket) deletes the tasks' files; a failed one deletes them only if it provably
    did not land; a ``commit_id`` that landed before commits nothing and deletes them (no
    snapshot names them).

    Raises:
        OptionError: two tasks wrote one bucket of a primary-key table.
        CommitConflictError: the commit conflicts with one that landed first.
        CommitRetriesExhaustedError: concurrent commits kept winning the race.
    """
    per_task = task_messages(messages)
    return commit_written(
        table,
        [m for task in per_task for m in task],
        commit_id,
        check=lambda: check_single_writer(table, per_task),
        overwrite=overwrite,
        commit_empty=overwrite is not None and overwrite is not False,
        operation=operation,
    )


def abort_tasks(table: Table, messages: Sequence[WriterCommitMessage | None], commit_user: str) -> bool:
    """Spark's abort of a write job (``abort_written``): with every task's messages in hand the
    commit step was reached, and decided (files kept); with a task's missing (it failed) the
    commit never ran, and the tasks' files are deleted. Returns whether files were deleted."""
    reached = all(isinstance(m, PaimonCommitMessage) for m in messages)
    flat = [m for task in task_messages(messages) for m in task]
    return abort_written(table, flat, commit_user, commit_reached=reached)
