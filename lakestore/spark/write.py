"""Distributed write of a Spark DataFrame into a lakestore table, committed once by the driver.

Plan: (1) ``mapInArrow`` conforms each Arrow batch to the table schema and appends the row's
Paimon bucket (lakestore's own vectorised bucket function, so Spark and single-process writes
agree); (2) ``repartition`` by (partition columns, bucket) so every bucket is owned by exactly
one task (sequence numbers of a bucket come from one writer); (3) each task runs a
``TableWrite`` over its batches and yields its serialized CommitMessages; (4) the driver collects
them and commits one snapshot.

Only messages the driver collected are committed, so files of failed or retried task attempts
are never referenced (a task that raises deletes its files; a crashed one leaves orphans that no
snapshot names). A job rerun with the same ``commit_user`` and ``commit_identifier`` finds the
landed snapshot and returns it without writing again.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from lakestore import errors
from lakestore.commit.commit import Overwrite
from lakestore.io.fileio import FileIO
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.partitions import check_partition_spec
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from lakestore.table import Table
from lakestore.write.input import assign_buckets, conform

BUCKET_COLUMN = "__lakestore_bucket"
MESSAGE_COLUMN = "message"
MESSAGE_SCHEMA = T.StructType([T.StructField(MESSAGE_COLUMN, T.BinaryType(), nullable=False)])

# Test-only fault injection: "<point>:<marker file>" in the executors' environment makes the first
# task reaching <point> kill its Python worker (the marker makes it happen once per job).
FAULT_ENV = "LAKESTORE_SPARK_FAULT"


def _maybe_fail(point: str) -> None:
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    wanted, _, marker = spec.partition(":")
    if wanted != point:
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os._exit(17)  # a crash, not an exception: no cleanup code runs, like a killed executor


def _check_overwrite(table: Table, overwrite: Overwrite) -> None:
    if overwrite is None or overwrite is False or overwrite is True:
        return
    check_partition_spec(table.partition_keys, overwrite, what="overwrite")


def _check_schema(df: DataFrame, table: Table) -> None:
    """Reject missing/extra columns and impossible casts on the driver, with lakestore's errors
    (value-dependent problems, e.g. a null key or an overflowing cast, surface from the tasks)."""
    empty = to_arrow_schema(df.schema, timezone="UTC").empty_table()
    conform(empty, table.schema)


def _bucket_rows(path: str, file_io: FileIO) -> Any:
    def assign(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        schema = Table.from_path(path, file_io=file_io).schema
        for batch in batches:
            # Buckets hash the table's binary row layout: hash conformed values, ship the originals.
            rows = conform(pa.Table.from_batches([batch]), schema)
            buckets = pa.array(assign_buckets(rows, schema), type=pa.int32())
            yield pa.RecordBatch.from_arrays([*batch.columns, buckets], names=[*batch.schema.names, BUCKET_COLUMN])

    return assign


def _write_buckets(path: str, file_io: FileIO, commit_user: str, overwrite: Overwrite) -> Any:
    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        writer = None
        try:
            for batch in batches:
                if not batch.num_rows:
                    continue
                if writer is None:  # lazily: an empty task need not index the table's files
                    writer = Table.from_path(path, file_io=file_io).new_write(commit_user=commit_user, overwrite=overwrite)
                index = batch.schema.get_field_index(BUCKET_COLUMN)
                writer.write_arrow(batch.remove_column(index) if index >= 0 else batch)
            if writer is None:
                return
            messages = writer.prepare_commit()
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        _maybe_fail("after-write")
        payload = pa.array([m.to_bytes() for m in messages], type=pa.binary())
        yield pa.RecordBatch.from_arrays([payload], names=[MESSAGE_COLUMN])

    return write


def commit_messages(
    table: Table, messages: list[CommitMessage], *, commit_user: str, commit_identifier: int, kind: str, overwrite: Overwrite
) -> list[Snapshot]:
    """One commit on the driver; files are deleted only if the commit provably did not land."""
    start = table.snapshot_manager.latest_id()
    commit = table.new_commit(commit_user=commit_user)
    try:
        return commit.commit(messages, commit_identifier, overwrite=overwrite)
    except BaseException:
        landed = table.snapshot_manager.find_committed(commit_user, commit_identifier, kind, after_id=start)
        if landed is None:
            commit.abort(messages)
        raise


_EXECUTOR_ERROR = re.compile(r"lakestore\.errors\.(\w+): ([^\n]*)")


def collect_messages(df: DataFrame) -> list[CommitMessage]:
    """Messages of a DataFrame with one binary ``message`` column (from the write/compact tasks).

    A lakestore error raised on an executor reaches the driver wrapped in Spark's exception;
    it is re-raised here as the same typed error (the Spark exception stays its cause)."""
    try:
        rows = df.collect()
    except Exception as exc:
        match = _EXECUTOR_ERROR.search(str(exc))
        error_type = getattr(errors, match.group(1), None) if match else None
        if match is not None and isinstance(error_type, type) and issubclass(error_type, errors.LakestoreError):
            if error_type is errors.CorruptMetadataError:
                raise errors.CorruptMetadataError("<executor>", match.group(2)) from exc
            raise error_type(match.group(2)) from exc
        raise
    return [CommitMessage.from_bytes(bytes(row[0])) for row in rows]


def write_dataframe(
    df: DataFrame, table: Table, *, overwrite: Overwrite = None, commit_user: str | None = None, commit_identifier: int | None = None
) -> Snapshot | None:
    """Write ``df`` into ``table`` through Spark in one commit; returns the new snapshot.

    ``overwrite=True`` replaces the table, ``overwrite={"dt": "x"}`` one partition (rows outside it
    are refused). Returns None when nothing was written and nothing overwritten.

    Several rows of one key in ``df`` reach their bucket's task in shuffle order, not input order:
    give the table a ``sequence.field`` if such duplicates must resolve deterministically.
    Spark TimestampType columns fit TIMESTAMP WITH LOCAL TIME ZONE; TIMESTAMP columns take
    TimestampNTZType (cast in Spark first), as lakestore refuses lossy type changes.
    """
    user = commit_user or str(uuid.uuid4())
    identifier = BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier
    overwrite = None if overwrite is False else overwrite
    kind = "APPEND" if overwrite is None else "OVERWRITE"
    _check_overwrite(table, overwrite)
    _check_schema(df, table)
    if identifier != BATCH_COMMIT_IDENTIFIER:
        # A rerun of a job whose commit landed: no second write, no orphaned files.
        landed = table.snapshot_manager.find_committed(user, identifier, kind, after_id=None)
        if landed is not None:
            return landed

    schema = table.schema
    fixed_buckets = schema.core_options().bucket > 0
    if fixed_buckets:
        with_bucket = T.StructType([*df.schema.fields, T.StructField(BUCKET_COLUMN, T.IntegerType(), nullable=False)])
        routed = df.mapInArrow(_bucket_rows(table.path, table.file_io), with_bucket)
        routed = routed.repartition(*[F.col(k) for k in schema.partition_keys], F.col(BUCKET_COLUMN))
    else:
        # bucket-unaware append table: any task may write any partition, no shuffle needed.
        routed = df
    written = routed.mapInArrow(_write_buckets(table.path, table.file_io, user, overwrite), MESSAGE_SCHEMA)
    messages = collect_messages(written)
    if not messages and overwrite is None:
        return None
    snapshots = commit_messages(table, messages, commit_user=user, commit_identifier=identifier, kind=kind, overwrite=overwrite)
    return snapshots[-1] if snapshots else None
